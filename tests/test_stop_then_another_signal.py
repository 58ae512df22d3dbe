"""A second stop signal after the first, sent to the process `sacscale` runs in: the process
ends by the first. Once the stop has unwound the command, the interpreter still takes up to
a second to shut down (torch, MuJoCo, threads): a signal then must not end it by its own
(tests/test_stop_signals_unwind_commands.py covers one during the cleanup). Two sent 0-5 ms
apart may both be pending when Python runs its handlers, which it does by signal number
(SIGINT before SIGTERM) and also inside the handler's own signal.signal calls: the one
named is still the one that arrived first, and no traceback is printed.

The command is a stand-in put in place of the CLI's dispatch, run through `sacscale.cli.main`
as the console script runs it (no argv: the process's entry point); its slow shutdown is an
atexit function."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

PROGRAM = """
import atexit, sys, time, zlib
import sacscale.cli as cli

def work(argv):
    print("working", file=sys.__stderr__, flush=True)
    while True:  # C calls (both signals pending at once) between bytecodes
        zlib.compress(b"x" * 2_000_000)

def slow_shutdown():
    print("shutting down", file=sys.__stderr__, flush=True)
    time.sleep(shutdown_s)

cli._main = work
atexit.register(slow_shutdown)
shutdown_s = float(sys.argv[1])
sys.argv = ["sacscale", "verify", "results/x"]
sys.exit(cli.main())
"""


def _start(shutdown_s: float) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.Popen([sys.executable, "-c", PROGRAM, str(shutdown_s)], cwd=REPO, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def _wait_for(proc: subprocess.Popen, line: str) -> list[str]:
    seen = []
    while (got := proc.stderr.readline()) and got.rstrip("\n") != line:
        seen.append(got)
    assert got, f"the process ended before saying {line!r}: {''.join(seen)}"
    return seen


@pytest.mark.parametrize("second", [signal.SIGINT, signal.SIGHUP, signal.SIGTERM],
                         ids=lambda s: signal.Signals(s).name)
def test_a_signal_while_the_process_shuts_down_after_a_stop_changes_nothing(second):
    proc = _start(shutdown_s=1.5)
    try:
        _wait_for(proc, "working")
        proc.send_signal(signal.SIGTERM)
        before = _wait_for(proc, "shutting down")  # the command has unwound and said its line
        time.sleep(0.1)
        proc.send_signal(second)
        rest = proc.communicate(timeout=60)[1]
    finally:
        proc.kill()
    assert proc.returncode == 143, before + [rest]
    assert before == ["sacscale verify: interrupted (SIGTERM)\n"] and rest == "", before + [rest]


def test_a_ctrl_c_just_after_a_sigterm_leaves_the_sigterm_named_without_a_traceback():
    """20 tries, the Ctrl-C 0 to 5 ms after the SIGTERM reached the process; four processes
    at a time. (Two signals pending in the kernel at once, sent to a process not running
    meanwhile, are delivered lowest number first: no process can tell which was sent first.)"""
    ended = _pairs_sent([0.0, 0.001, 0.002, 0.003, 0.005] * 4, 4, signal.SIGTERM, signal.SIGINT, delivered_first=True)
    wrong = [case for case in ended if case[1:] != (143, "sacscale verify: interrupted (SIGTERM)\n")]
    assert wrong == [], wrong


def _pairs_sent(delays: list[float], at_once: int, first: int, second: int,
                delivered_first: bool = False) -> list[tuple]:
    """(delay, exit status, stderr) of stand-in commands sent `first`, then `second` after each
    delay (once `first` was taken, with `delivered_first`), `at_once` commands at a time."""
    ended = []
    for start in range(0, len(delays), at_once):
        procs = [(_start(shutdown_s=0), delay) for delay in delays[start:start + at_once]]
        try:
            for proc, delay in procs:
                _wait_for(proc, "working")
                os.kill(proc.pid, first)
                if delivered_first:
                    _wait_until_delivered(proc.pid, first)
                if delay:
                    time.sleep(delay)
                os.kill(proc.pid, second)
            for proc, delay in procs:
                err = proc.communicate(timeout=60)[1]
                ended.append((delay, proc.returncode, err.replace("shutting down\n", "")))
        finally:
            for proc, _ in procs:
                proc.kill()
    return ended


def _wait_until_delivered(pid: int, signum: int, within_s: float = 30.0) -> None:
    """Until `signum` is no longer pending for the process (its handler has taken it)."""
    bit = 1 << (signum - 1)
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        status = Path(f"/proc/{pid}/status").read_text()
        pending = int(next(line for line in status.splitlines() if line.startswith("ShdPnd:")).split()[1], 16)
        if not pending & bit:
            return
        time.sleep(0.0001)


def test_a_sigterm_just_after_a_ctrl_c_leaves_the_ctrl_c_named():
    """30 tries, the SIGTERM 0 to 10 ms after the Ctrl-C was sent, not waiting for it to be
    taken: at 0 ms both are often pending together, and the kernel hands the SIGINT over first.
    Its handler used to be cut into by the SIGTERM's before it wrote its wakeup byte, so the
    bytes read SIGTERM first and the command ended by SIGTERM, 143."""
    ended = _pairs_sent([0.0, 0.0, 0.001, 0.002, 0.005, 0.01] * 5, 3, signal.SIGINT, signal.SIGTERM)
    wrong = [case for case in ended if case[1:] != (-signal.SIGINT, "sacscale verify: interrupted (SIGINT)\n")]
    assert wrong == [], wrong


@pytest.mark.parametrize("sent", [(signal.SIGINT, signal.SIGTERM), (signal.SIGTERM, signal.SIGINT),
                                  (signal.SIGHUP, signal.SIGTERM), (signal.SIGINT, signal.SIGHUP)],
                         ids=lambda pair: "-".join(signal.Signals(s).name for s in pair))
def test_stops_pending_together_are_taken_lowest_number_first(sent):
    """Two sent while the process did not run (here: stopped) carry no order the process can
    see: they are named as the kernel hands them over, lowest number first, the same in every
    try, not by the order the handlers happened to run in."""
    proc = _start(shutdown_s=0)
    try:
        _wait_for(proc, "working")
        proc.send_signal(signal.SIGSTOP)
        _wait_until_stopped(proc.pid)
        for signum in sent:
            proc.send_signal(signum)
        proc.send_signal(signal.SIGCONT)
        err = proc.communicate(timeout=60)[1].replace("shutting down\n", "")
    finally:
        proc.kill()
    first = min(sent)
    assert proc.returncode == (-first if first == signal.SIGINT else 128 + first), err
    assert err == f"sacscale verify: interrupted ({signal.Signals(first).name})\n"


def _wait_until_stopped(pid: int, within_s: float = 30.0) -> None:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        stat = Path(f"/proc/{pid}/stat").read_text()
        if stat[stat.rindex(")") + 2:][:1] == "T":
            return
        time.sleep(0.001)
    raise AssertionError(f"process {pid} did not stop")
