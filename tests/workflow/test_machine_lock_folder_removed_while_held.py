"""The machine's training lock when a /tmp cleaner removes its folder under a measured run. Both
refusals were right, but said what was not so: a command refused by the machine-wide name was
told the holder was "in another mount namespace" (it was in this one, its lock file removed),
a second measured run was named a lock file that the holder had made again without saying so,
and record-run printed its refusal twice on a terminal (once for stdout, once for stderr)."""

import json
import os
import shutil
import subprocess
import sys
import time

import pytest

from sacscale import locks
from sacscale.pipeline import machine_lock
from sacscale.pipeline.machine_lock import MachineBusy, hand_run_hold, training_machine

REMOVED = "as its machine-wide name says: the lock file there was removed while held (a /tmp cleaner?), and its " \
          "holder makes it again"
REMADE = "which made this lock file again after the one it held was removed"


@pytest.fixture
def folder(tmp_path, monkeypatch):
    lock_folder = tmp_path / "ml"
    monkeypatch.setenv(machine_lock.VARIABLE, str(lock_folder))
    return lock_folder


def test_a_hand_run_and_a_second_run_before_the_file_is_made_again_are_told_so(folder, monkeypatch):
    monkeypatch.setattr(locks, "POLL_S", 1000.0)  # the holder does not make its file again meanwhile
    with training_machine("p_r1_n1", "A"):
        shutil.rmtree(folder)
        with pytest.raises(MachineBusy) as hand, hand_run_hold("env-bench"):
            pass
        with pytest.raises(MachineBusy) as measured, training_machine("q_r1_n1", "B"):
            pass
    pid = f"pid {os.getpid()}"
    assert str(hand.value).startswith(f"this machine's training lock ({folder}) is held by {pid}, {REMOVED}; "
                                      "sacscale env-bench would run beside a measured run")
    assert str(measured.value).startswith(f"this machine's training lock ({folder}) is held by {pid}, {REMOVED}: "
                                          "another pipeline invocation is training on this machine")
    assert "mount namespace" not in str(hand.value) + str(measured.value)


def test_a_second_run_is_told_the_holder_made_its_lock_file_again(folder):
    with training_machine("p_r1_n1", "A"):
        shutil.rmtree(folder)
        lock = folder / machine_lock.LOCK_NAME
        deadline = time.monotonic() + 60
        while not (lock.exists() and "remade" in lock.read_text()):
            assert time.monotonic() < deadline, "the holder did not make its lock file again"
            time.sleep(0.1)
        with pytest.raises(MachineBusy) as measured, training_machine("q_r1_n1", "B"):
            pass
        with pytest.raises(MachineBusy) as hand, hand_run_hold("env-bench"):
            pass
    pid = f"pid {os.getpid()}"
    assert str(measured.value).startswith(f"this machine's training lock is held by {pid} (run p_r1_n1, set A), "
                                          f"{REMADE} ({lock}): another pipeline invocation")
    assert str(hand.value).startswith(f"this machine's training lock is held by {pid} (run p_r1_n1, set A), "
                                      f"{REMADE} ({lock}); sacscale env-bench would run beside")


def test_record_runs_refusal_is_one_line_where_stdout_and_stderr_are_one_file(folder, tmp_path):
    resolved = json.dumps({"run": "q_r1_n1", "run_set": "B", "seed": 1})
    cmd = [sys.executable, "-m", "sacscale.cli", "record-run", "--run-dir", str(tmp_path / "runs" / "q_r1_n1"),
           "--work-dir", str(tmp_path / "runs" / ".q_r1_n1.partial"), "--attic", str(tmp_path / "attempts"),
           "--resolved-json", resolved, "--timeout", "60", "--machine-lock", "--", "true"]
    with training_machine("p_r1_n1", "A"):
        done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    assert done.returncode == 1, done.stdout
    assert done.stdout.count("\n") == 1 and done.stdout.startswith("run_training: run q_r1_n1 not started: "), \
        done.stdout


def test_a_refused_command_leaves_no_lock_file_or_folder_behind(folder, monkeypatch):
    """Refused by the machine-wide name after its lock file let it in, a command left the file
    (and the folder) it had made; the holder took that file over, and the next refusal said the
    holder had made it again. Now each refusal removes what it made, and says the same."""
    monkeypatch.setattr(locks, "POLL_S", 1000.0)  # the holder does not make its file again meanwhile
    with training_machine("p_r1_n1", "A"):
        shutil.rmtree(folder)
        for _ in range(2):
            with pytest.raises(MachineBusy) as hand, hand_run_hold("env-bench"):
                pass
            assert not folder.exists() and REMOVED in str(hand.value) and REMADE not in str(hand.value)
            with pytest.raises(MachineBusy) as measured, training_machine("q_r1_n1", "B"):
                pass
            assert not folder.exists() and REMOVED in str(measured.value)


def test_a_refused_command_leaves_a_lock_file_that_was_there(folder, monkeypatch):
    monkeypatch.setattr(locks, "POLL_S", 1000.0)
    with training_machine("p_r1_n1", "A"):
        lock = folder / machine_lock.LOCK_NAME
        lock.unlink()
        lock.write_text("")  # an unheld file (as a killed run leaves one): not the refused command's to remove
        lock.chmod(0o600)
        with pytest.raises(MachineBusy), hand_run_hold("env-bench"):
            pass
        assert lock.is_file()
