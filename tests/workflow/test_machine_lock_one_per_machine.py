"""The machine's training lock under different SACSCALE_LOCK_DIR values. Before: the lock
lived in the lock folder that setting names, so three `record-run --machine-lock` started
in shells with two values and none all trained at once. Now only SACSCALE_MACHINE_LOCK_DIR
moves it (default: `sacscale-<uid>` in /tmp); SACSCALE_LOCK_DIR moves the other locks and
the compile cache alone."""

import os
import subprocess
import sys

import pytest

from sacscale import lock_folder, locks
from sacscale.pipeline import machine_lock
from sacscale.pipeline.machine_lock import training_machine
from test_machine_lock import HOLD, record_run


def test_a_run_in_a_shell_with_another_lock_folder_is_refused_naming_the_first(tmp_path, monkeypatch):
    first, second = tmp_path / "l1", tmp_path / "l2"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, "p_r2_n2", "A"], stdout=subprocess.PIPE, text=True,
                              env={**os.environ, "SACSCALE_LOCK_DIR": str(first)})
    try:
        assert holder.stdout.readline().strip() == "held"
        monkeypatch.setenv("SACSCALE_LOCK_DIR", str(second))  # record_run's process inherits it
        proc, _, run_dir, work = record_run(tmp_path)
        assert proc.returncode == 1, proc.stderr
        assert f"run q_r1_n1 not started: this machine's training lock is held by pid {holder.pid} " \
               "(run p_r2_n2, set A)" in proc.stderr
        assert not run_dir.exists() and not work.exists()
    finally:
        holder.kill()
        holder.wait()


def test_the_lock_is_in_the_users_folder_in_tmp_whatever_the_lock_folder_setting(tmp_path, monkeypatch):
    monkeypatch.setattr(lock_folder, "DEFAULT_BASE", tmp_path / "tmp")  # /tmp
    (tmp_path / "tmp").mkdir()
    monkeypatch.delenv(machine_lock.VARIABLE)
    monkeypatch.setenv("SACSCALE_LOCK_DIR", str(tmp_path / "elsewhere"))
    with training_machine("q_r1_n1", "B"):
        assert (tmp_path / "tmp" / f"sacscale-{os.getuid()}" / machine_lock.LOCK_NAME).is_file()
    assert not (tmp_path / "elsewhere").exists()


def test_an_unusable_default_folder_names_the_machine_locks_setting(tmp_path, monkeypatch):
    monkeypatch.setattr(lock_folder, "DEFAULT_BASE", tmp_path)
    taken = tmp_path / f"sacscale-{os.getuid()}"
    taken.mkdir()
    taken.chmod(0o777)  # as if another user had made it open first
    monkeypatch.delenv(machine_lock.VARIABLE)
    with pytest.raises(locks.LockError, match=r"is writable by other users \(mode 0777\); another user could plant, "
                                              r"hold or swap its files: remove it, or set SACSCALE_MACHINE_LOCK_DIR "
                                              r"to a folder of your own \(mode 0700\)$"):
        with training_machine("q_r1_n1", "B"):
            pass
