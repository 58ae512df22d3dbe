"""A lock whose whole folder is removed while held (`rm -rf /tmp/sacscale-*`, a /tmp
cleaner) let the next pipeline invocation make a new folder and lock and train at once;
the holder now makes the folder and lock again and holds them."""

import os
import shutil
import time

from sacscale import locks
from test_lock_file_removed_or_replaced import _second_holder


def test_a_lock_folder_removed_while_held_is_made_again_and_still_refuses_a_second_holder(monkeypatch, tmp_path):
    folder = tmp_path / "locks"
    monkeypatch.setenv("SACSCALE_LOCK_DIR", str(folder))
    env = {**os.environ, "SACSCALE_LOCK_DIR": str(folder)}
    with locks.private_lock("x.lock", "the x lock", 0, note="run n1"):
        shutil.rmtree(folder)
        deadline = time.monotonic() + 60  # a bound for a loaded machine, not a timing claim
        while not (folder / "x.lock").is_file() or not (folder / "x.lock").stat().st_size:
            assert time.monotonic() < deadline, "the lock folder was not made again"
            time.sleep(0.05)
        assert (folder.stat().st_mode & 0o777) == 0o700
        out = _second_holder(env)
        assert out.startswith("HELD"), out
        assert f"pid {os.getpid()} (run n1)" in out
    assert _second_holder(env).startswith("TAKEN")  # every folder and file released


def test_a_lock_folder_another_user_could_swap_is_refused(monkeypatch, tmp_path):
    """Inside a folder of another user's, or one others can write without the sticky bit,
    the lock folder (and Inductor's cache in it, a path read again and again) could be
    moved away while in use and one of theirs put at its name."""
    import pytest

    open_parent = tmp_path / "open"
    open_parent.mkdir()
    open_parent.chmod(0o777)
    monkeypatch.setenv("SACSCALE_LOCK_DIR", str(open_parent / "locks"))
    with pytest.raises(locks.LockError, match=r"is inside .*/open, which is writable by other users without the "
                                              r"sticky bit \(mode 0777\); another user could plant, hold or swap its "
                                              r"files"):
        locks.private_folder("torchinductor")
    with pytest.raises(locks.LockError, match="writable by other users without the sticky bit"):
        with locks.private_lock("x.lock", "the x lock", 0):
            pass
    sticky = tmp_path / "sticky"
    sticky.mkdir()
    sticky.chmod(0o1777)  # as /tmp: nobody else can move a folder of ours
    monkeypatch.setenv("SACSCALE_LOCK_DIR", str(sticky / "locks"))
    assert locks.private_folder("torchinductor") == sticky / "locks" / "torchinductor"
    if os.getuid() == 0:
        theirs = tmp_path / "theirs"
        theirs.mkdir()
        os.chown(theirs, 1001, 1001)
        monkeypatch.setenv("SACSCALE_LOCK_DIR", str(theirs / "locks"))
        with pytest.raises(locks.LockError, match=r"is inside .*/theirs, which belongs to uid 1001, another user"):
            locks.private_folder("torchinductor")
