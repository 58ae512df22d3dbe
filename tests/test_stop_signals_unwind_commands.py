"""SIGTERM and SIGHUP to a command without stop handling of its own (sacscale.stopping.
raised_as_interrupted, installed by sacscale.cli): raised as Ctrl-C is, so that `finally`
blocks remove temporary files; a second signal cannot cut that cleanup short; a signal
ignored at the start (`nohup`) stays ignored. (The trainers and the run wrapper keep their
own handling: tests/faults/test_trainer_interrupted.py, tests/workflow/test_run_wrapper_stop.py.)
tests/eval/test_render_stopped_by_signal.py stops a real render mid-write."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sacscale.stopping import Interrupted, raised_as_interrupted

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def default_dispositions():
    saved = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGHUP)}
    for s in saved:
        signal.signal(s, signal.SIG_DFL)
    yield
    for s, h in saved.items():
        signal.signal(s, h)


def test_sigterm_raises_and_a_second_one_waits_for_the_cleanup(default_dispositions):
    cleaned = []
    with pytest.raises(Interrupted) as stopped:
        with raised_as_interrupted():
            try:
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(5)  # the handler runs at the next bytecode: never reached
            finally:
                os.kill(os.getpid(), signal.SIGTERM)  # ignored: the cleanup goes on
                cleaned.append(True)
    assert stopped.value.signum == signal.SIGTERM and cleaned == [True]
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # put back


def test_a_signal_ignored_at_the_start_stays_ignored(default_dispositions):
    signal.signal(signal.SIGHUP, signal.SIG_IGN)  # started under nohup
    with raised_as_interrupted():
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
        assert callable(signal.getsignal(signal.SIGTERM))
        os.kill(os.getpid(), signal.SIGHUP)  # nothing happens
    assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN


def test_sigterm_to_verify_is_one_line_and_writes_nothing(tmp_path):
    """Another command than render: verify of a committed set, SIGTERM once it reads the set."""
    run_set = REPO / "results" / "h200x1_shared_short"
    output = tmp_path / "verify.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    for _ in range(5):  # verify of a small set takes about a second: it may end before the signal
        proc = subprocess.Popen([sys.executable, "-m", "sacscale", "verify", str(run_set), "--output", str(output)],
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        _wait_until_reading(proc, run_set, deadline=time.monotonic() + 120)
        proc.send_signal(signal.SIGTERM)
        err = proc.communicate(timeout=60)[1]
        if proc.returncode != 0:
            break
        output.unlink()
    else:
        pytest.skip("verify finished before the signal, 5 times")
    assert proc.returncode == 143, err
    assert err.strip().splitlines() == ["sacscale verify: interrupted (SIGTERM)"], err
    assert list(tmp_path.iterdir()) == []


def _wait_until_reading(proc: subprocess.Popen, folder: Path, deadline: float) -> None:
    """Until one of the process's open files lies in `folder` (it is at work: a fixed sleep
    lands on a loaded machine before Python has started), it ends, or time runs out."""
    fds = Path(f"/proc/{proc.pid}/fd")
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            targets = [os.readlink(fd) for fd in fds.iterdir()]
        except OSError:  # ending, or a descriptor closed between listing and reading: poll again
            targets = []
        if any(t.startswith(str(folder) + os.sep) for t in targets):
            return
        time.sleep(0.005)
