"""`sacscale train-reference` runs the reference trainer in its own process group and
ends it on the timeout or a stop signal: SIGINT to the group, SIGKILL after 30 s."""

import os
import signal
import sys
import threading
import time

from sacscale.commands.train_reference import _supervise


def run(tmp_path, code: str, timeout_s: float = 60.0):
    argv = [sys.executable, "-c", code]
    return _supervise(argv, dict(os.environ), tmp_path / "reference.log", timeout_s)


def test_its_exit_code_says_completed_or_failed_and_its_output_is_logged(tmp_path):
    assert run(tmp_path, "import os; print(os.getcwd())") == (0, "completed")
    assert (tmp_path / "reference.log").read_text().strip() == str(tmp_path)  # it runs in the run directory
    assert run(tmp_path, "raise SystemExit(3)") == (3, "failed")


def test_the_timeout_interrupts_its_group(tmp_path):
    started = time.monotonic()
    assert run(tmp_path, "import time; time.sleep(60)", timeout_s=0.5) == (-signal.SIGINT, "failed (timeout)")
    assert time.monotonic() - started < 20


def test_a_stop_signal_interrupts_it_and_the_handlers_are_restored(tmp_path):
    before = signal.getsignal(signal.SIGTERM)
    threading.Timer(0.5, os.kill, args=(os.getpid(), signal.SIGTERM)).start()
    assert run(tmp_path, "import time; time.sleep(60)") == (-signal.SIGINT, "interrupted")
    assert signal.getsignal(signal.SIGTERM) is before
