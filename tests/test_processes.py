import multiprocessing as mp
import os
import signal
import subprocess
import sys
import time

from sacscale.processes import SpawnedChild, describe_exit, end_all, is_stopped, start_group


def python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def gone(pid: int, within_s: float = 5.0) -> bool:
    """Whether `pid` ends within `within_s`: no /proc entry, or a zombie (its new parent,
    not us, reaps it)."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as fh:
                stat = fh.read()
        except OSError:
            return True
        if stat[stat.rindex(")") + 2 :][:1] == "Z":
            return True
        time.sleep(0.02)
    return False


def leader_with_grandchild(deaf: bool) -> tuple:
    """A group leader that starts a grandchild and says its pid; `deaf`: both ignore SIGTERM."""
    code = ("import signal, subprocess, sys, time\n"
            + ("signal.signal(signal.SIGTERM, signal.SIG_IGN)\n" if deaf else "")
            + "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
            "print(p.pid, flush=True)\n"
            "time.sleep(60)\n")
    leader = start_group(python(code), stdout=subprocess.PIPE)
    grandchild = int(leader.popen.stdout.readline())
    leader.popen.stdout.close()
    return leader, grandchild


def test_describe_exit_names_the_code_or_the_signal():
    assert describe_exit(3) == "exited with code 3"
    assert describe_exit(-9) == "was killed by signal 9 (SIGKILL)"
    assert describe_exit(-200) == "was killed by signal 200 (unknown signal)"


def test_is_stopped_sees_a_stopped_child():
    child = mp.get_context("spawn").Process(target=time.sleep, args=(30,))
    child.start()
    try:
        assert not is_stopped(child.pid)
        os.kill(child.pid, signal.SIGSTOP)
        deadline = time.monotonic() + 5
        while not is_stopped(child.pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert is_stopped(child.pid)
    finally:
        child.kill()
        child.join()
    assert not is_stopped(child.pid)  # gone: no /proc entry


def test_a_child_that_exits_is_reported_with_its_code():
    child = start_group(python("raise SystemExit(3)"))
    ending = child.wait(30)
    assert (ending.code, ending.timed_out, ending.stop_requested, ending.by_signal) == (3, False, False, None)
    assert ending.describe() == "exited with code 3"


def test_a_child_killed_by_a_signal_is_reported_with_the_signal():
    child = start_group(python("import time; time.sleep(60)"))
    os.kill(child.pid, signal.SIGKILL)
    ending = child.wait(30)
    assert ending.code == -signal.SIGKILL and ending.by_signal == signal.SIGKILL
    assert ending.describe() == "was killed by signal 9 (SIGKILL)"


def test_a_wait_past_its_deadline_leaves_the_child_running_until_ended():
    child = start_group(python("import time; time.sleep(60)"))
    started = time.monotonic()
    waited = child.wait(0.3)
    assert waited.timed_out and waited.code is None and time.monotonic() - started < 5
    assert child.poll() is None
    ended = child.end(signal.SIGTERM, grace_s=10)
    assert ended.code == -signal.SIGTERM and not ended.killed


def test_a_stop_request_ends_the_wait():
    # SIGINT's default action restored: a child of a background shell starts with SIGINT ignored
    child = start_group(python("import signal, time; signal.signal(signal.SIGINT, signal.SIG_DFL); time.sleep(60)"))
    asked = time.monotonic() + 0.3
    waited = child.wait(60, stop=lambda: time.monotonic() > asked, poll_s=0.05)
    assert waited.stop_requested and not waited.timed_out and waited.code is None
    assert waited.describe() == "was still running when asked to stop"
    assert child.end(signal.SIGINT, grace_s=10).code == -signal.SIGINT


def test_ending_a_group_ends_the_grandchild_too():
    leader, grandchild = leader_with_grandchild(deaf=False)
    ending = leader.end(signal.SIGTERM, grace_s=10)
    assert ending.code == -signal.SIGTERM and not ending.killed
    assert gone(grandchild)


def test_a_group_deaf_to_the_first_signal_is_killed_after_the_grace():
    leader, grandchild = leader_with_grandchild(deaf=True)
    started = time.monotonic()
    ending = leader.end(signal.SIGTERM, grace_s=0.5)
    assert ending.code == -signal.SIGKILL and ending.killed and not ending.frozen
    assert 0.5 <= time.monotonic() - started < 10
    assert gone(grandchild)


def sleep_deaf_to_sigterm(ready) -> None:
    """A child that ignores SIGTERM, as a rank does (it acts on it only between iterations):
    SIGTERM would otherwise end even a stopped process."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    ready.set()
    time.sleep(60)


def test_a_frozen_child_is_killed_at_once_and_its_peers_end_normally():
    ctx = mp.get_context("spawn")
    ready = ctx.Event()
    frozen = ctx.Process(target=sleep_deaf_to_sigterm, args=(ready,))
    running, done = (ctx.Process(target=time.sleep, args=(s,)) for s in (60, 0))
    for p in (frozen, running, done):
        p.start()
    done.join()
    assert ready.wait(30)
    os.kill(frozen.pid, signal.SIGSTOP)
    deadline = time.monotonic() + 5
    while not is_stopped(frozen.pid) and time.monotonic() < deadline:
        time.sleep(0.01)
    started = time.monotonic()
    endings = end_all([SpawnedChild(p) for p in (frozen, running, done)], signal.SIGTERM, grace_s=30,
                      kill_frozen=True, reap_s=10)
    assert time.monotonic() - started < 10  # not the grace period: the frozen one cannot act on SIGTERM
    assert [(e.code, e.killed, e.frozen) for e in endings] == [
        (-signal.SIGKILL, True, True), (-signal.SIGTERM, False, False), (0, False, False)]
