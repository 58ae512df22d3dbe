"""The lock folder's disk full when a lock's holder is recorded (issue 36, faults row 28):
the bare `OSError: [Errno 28]` escaped the lock (a traceback from the library, one line
without the file's name from the CLI); now a LockError names the lock file, and the lock
is released."""

import errno
import os

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
