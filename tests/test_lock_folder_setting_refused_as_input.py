"""A lock folder setting whose folder others can write in (mode 0777, no sticky bit). Before:
record-run refused it with exit 1, where the same variable naming a folder inside a finished
set was refused with exit 2; both refuse the user's setting before anything starts, which is
bad input (exit 2). The default folder, which no setting names, stays the machine's state."""


import pytest

from cli_runs import record_run_with_machine_lock
from sacscale import lock_folder
from sacscale.locks import LockError, LockSettingError, lock_dir, private_folder


def test_a_machine_lock_folder_others_can_write_is_refused_as_bad_input(tmp_path):
    folder = tmp_path / "lk"
    folder.mkdir()
    folder.chmod(0o777)
    done = record_run_with_machine_lock(tmp_path, {"SACSCALE_MACHINE_LOCK_DIR": str(folder)})
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == (
        f"sacscale record-run: run q_r1_n1 not started: lock folder {folder} is writable by other users "
        "(mode 0777); another user could plant, hold or swap its files: remove it, or set "
        "SACSCALE_MACHINE_LOCK_DIR to a folder of your own (mode 0700)")
    assert list(folder.iterdir()) == [] and not (tmp_path / "elsewhere").exists()


def test_the_default_lock_folder_refused_is_the_machines_state(tmp_path, monkeypatch):
    monkeypatch.setattr(lock_folder, "DEFAULT_BASE", tmp_path)
    monkeypatch.delenv("SACSCALE_LOCK_DIR", raising=False)
    default = lock_dir()
    default.mkdir()
    default.chmod(0o777)
    with pytest.raises(LockError) as refused:
        private_folder("x")
    assert not isinstance(refused.value, LockSettingError)


def test_a_set_lock_folder_others_can_write_is_a_setting_refused(tmp_path, monkeypatch):
    folder = tmp_path / "lk"
    folder.mkdir()
    folder.chmod(0o777)
    monkeypatch.setenv("SACSCALE_LOCK_DIR", str(folder))
    with pytest.raises(LockSettingError, match="is writable by other users"):
        private_folder("x")
