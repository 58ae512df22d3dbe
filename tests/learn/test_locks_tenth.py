"""A lock whose whole folder is removed while held (`rm -rf /tmp/sacscale-*`, a /tmp
cleaner) let the next pipeline invocation make a new folder and lock and train at once;
the holder now makes the folder and lock again and holds them."""

import os
import shutil
import time

from sacscale import locks
from test_locks_sixth import _second_holder


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
