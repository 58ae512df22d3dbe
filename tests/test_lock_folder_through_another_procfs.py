"""A lock folder named through procfs. Before: procfs was known by the device of /proc alone,
so a second proc mount (a host's /host/proc, `mount -t proc proc /x`) passed, and each process
resolved `/x/self/cwd/lk` to its own folder (two holders of the training lock); and the walk
stopped at /proc even where `..` left it at once (`/proc/../tmp/lk`, one plain folder for every
process, refused with an untrue reason)."""

import os
import subprocess

import pytest

from sacscale.locks import LockSettingError, lock_dir


@pytest.fixture
def second_proc(tmp_path):
    mount = tmp_path / "p"
    mount.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a second procfs needs root")
    done = subprocess.run(["mount", "-t", "proc", "proc", str(mount)], capture_output=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"mount -t proc refused here: {done.stderr.decode(errors='replace').strip()}")
    yield mount
    subprocess.run(["umount", str(mount)], check=False)


@pytest.mark.parametrize("under", ["self/cwd/lk", "thread-self/root/tmp/lk", "self/fd/0/lk"])
def test_a_lock_folder_through_a_second_proc_mount_is_refused(second_proc, monkeypatch, under):
    monkeypatch.setenv("SACSCALE_MACHINE_LOCK_DIR", str(second_proc / under))
    with pytest.raises(LockSettingError, match=rf"' leads through /proc \(by {second_proc}\), whose names "):
        lock_dir("SACSCALE_MACHINE_LOCK_DIR")


def test_a_link_to_a_second_proc_mount_is_refused(second_proc, tmp_path, monkeypatch):
    (tmp_path / "here").symlink_to(second_proc / "self" / "cwd")
    monkeypatch.setenv("SACSCALE_LOCK_DIR", str(tmp_path / "here" / "lk"))
    with pytest.raises(LockSettingError, match=rf"' leads through /proc \(by {tmp_path / 'here'}\), whose "):
        lock_dir()


@pytest.mark.parametrize("name", ["/proc/../TMP/lk", "/proc/sys/../../TMP/lk", "/proc/1/../../TMP/lk"])
def test_a_walk_that_leaves_proc_by_dotdot_names_one_folder(tmp_path, monkeypatch, name):
    given = name.replace("/TMP", str(tmp_path))
    monkeypatch.setenv("SACSCALE_LOCK_DIR", given)
    assert lock_dir() == type(tmp_path)(given)
