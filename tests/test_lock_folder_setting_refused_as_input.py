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


def test_a_machine_lock_folder_through_proc_is_refused_as_bad_input(tmp_path, monkeypatch):
    # absolute by its text, but each process's own working folder: two invocations from two
    # checkouts held the machine's training lock at once, each in its own <cwd>/.lk
    monkeypatch.chdir(tmp_path)
    done = record_run_with_machine_lock(tmp_path, {"SACSCALE_MACHINE_LOCK_DIR": "/proc/self/cwd/.lk"})
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == (
        "sacscale record-run: run q_r1_n1 not started: SACSCALE_MACHINE_LOCK_DIR='/proc/self/cwd/.lk' leads "
        "through /proc, whose names (/proc/self, /proc/<pid>, /dev/fd, ...) each process resolves to its own "
        "folders: a different lock folder in each process or working directory; give the folder's own absolute name")
    assert not (tmp_path / "elsewhere").exists()


@pytest.mark.parametrize("name", ["/proc/self/cwd/.lk", "/proc/thread-self/root/tmp/lk", "/dev/fd/0/lk",
                                  "/tmp/../proc/self/cwd/lk", "LINK/lk"])
def test_a_lock_folder_named_through_proc_is_refused(tmp_path, monkeypatch, name):
    (tmp_path / "here").symlink_to("/proc/self/cwd")  # a link of the user's own into /proc
    monkeypatch.setenv("SACSCALE_LOCK_DIR", name.replace("LINK", str(tmp_path / "here")))
    with pytest.raises(LockSettingError, match=r"' leads through /proc( \(by \S+\))?, whose names "):
        lock_dir()


def test_a_lock_folder_through_a_link_elsewhere_is_taken(tmp_path, monkeypatch):
    (tmp_path / "real").mkdir()
    (tmp_path / "here").symlink_to(tmp_path / "real")
    monkeypatch.setenv("SACSCALE_LOCK_DIR", str(tmp_path / "here" / "lk"))
    assert lock_dir() == tmp_path / "here" / "lk"
