"""Locks (docs/faults.md row 28): the lock folder's disk full
when a lock's holder is recorded (the bare `OSError: [Errno 28]` escaped the lock: a
traceback from the library, one line without the file's name from the CLI; now a LockError
names the lock file, and the lock is released), and a lock first taken under umask 0777."""

import errno
import os
import stat
import subprocess
import sys

import pytest

from sacscale import locks


def test_a_full_disk_when_recording_the_holder_names_the_lock_file(monkeypatch, tmp_path):
    folder = tmp_path / "locks"
    monkeypatch.setenv("SACSCALE_LOCK_DIR", str(folder))

    def full(fd, data, offset):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(locks.os, "pwrite", full)
    with pytest.raises(locks.LockError, match=rf"lock file {folder}/x\.lock: cannot record its holder "
                                              r"\(No space left on device\)"):
        with locks.private_lock("x.lock", "the x lock", 0):
            pytest.fail("the lock was taken without its record")
    monkeypatch.undo()
    monkeypatch.setenv("SACSCALE_LOCK_DIR", str(folder))
    with locks.private_lock("x.lock", "the x lock", 0):  # released: taken again at once
        assert (folder / "x.lock").read_text().startswith(f"pid {os.getpid()}")


def test_a_lock_taken_under_umask_0777_leaves_a_folder_and_file_its_owner_can_use(tmp_path):
    """Under umask 0777 the folder came out 0000 and the file 0000: refused at once with a
    message about links, and for every later run of this user with any umask."""
    folder = tmp_path / "locks"
    code = ("import os, sys\n"
            "os.umask(0o777)\n"
            "from sacscale.locks import private_lock\n"
            "with private_lock('x.lock', 'the x lock', 0):\n"
            "    pass\n")
    env = {**os.environ, "SACSCALE_LOCK_DIR": str(folder)}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    assert stat.S_IMODE((folder / "x.lock").stat().st_mode) == 0o600


def test_a_device_as_the_lock_folder_is_named_as_not_a_directory(monkeypatch):
    monkeypatch.setenv("SACSCALE_LOCK_DIR", "/dev/null")
    with pytest.raises(locks.LockError, match=r"lock folder /dev/null: cannot open it \(Not a directory\)"):
        with locks.private_lock("x.lock", "the x lock", 0):
            pytest.fail("taken")
