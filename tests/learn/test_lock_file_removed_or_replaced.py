"""Locks: a lock file removed while held (by hand, by a /tmp
cleaner) let the next process make a new file of that name and hold it too; the holder now
makes and locks a new one at once, so the next process waits for it as before."""

import os
import subprocess
import sys
import time

import pytest

from sacscale import locks

_SECOND = ("import sys\n"
           "from sacscale import locks\n"
           "try:\n"
           "    with locks.private_lock('x.lock', 'the x lock', 0):\n"
           "        print('TAKEN')\n"
           "except locks.LockHeld as exc:\n"
           "    print('HELD', exc)\n")


def _second_holder(env) -> str:
    return subprocess.run([sys.executable, "-c", _SECOND], env=env, capture_output=True, text=True,
                          timeout=60).stdout


def test_a_lock_file_removed_while_held_is_made_again_and_still_refuses_a_second_holder(monkeypatch, tmp_path):
    folder = tmp_path / "locks"
    monkeypatch.setenv("SACSCALE_LOCK_DIR", str(folder))
    env = {**os.environ, "SACSCALE_LOCK_DIR": str(folder)}
    with locks.private_lock("x.lock", "the x lock", 0, note="run n1"):
        (folder / "x.lock").unlink()
        deadline = time.monotonic() + 10
        while not (folder / "x.lock").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.2)
        out = _second_holder(env)
        assert out.startswith("HELD"), out
        assert f"pid {os.getpid()} (run n1)" in out
    assert _second_holder(env).startswith("TAKEN")  # every pinned file released


def test_a_lock_file_replaced_between_open_and_lock_is_opened_again(monkeypatch, tmp_path):
    folder = tmp_path / "locks"
    monkeypatch.setenv("SACSCALE_LOCK_DIR", str(folder))
    real_try = locks._try_lock
    swapped = []

    def swap_then_lock(fd, path, *rest):
        if not swapped:  # the first file is removed under us, as a cleaner would
            os.unlink(path)
            swapped.append(True)
        return real_try(fd, path, *rest)

    monkeypatch.setattr(locks, "_try_lock", swap_then_lock)
    with locks.private_lock("x.lock", "the x lock", 0):
        held = os.stat(folder / "x.lock")
        assert held.st_size > 0  # the holder is recorded in the file the name now names


@pytest.mark.parametrize("wait_s", [0, 0.5])
def test_a_held_lock_still_names_its_holder_after_the_wait(monkeypatch, tmp_path, wait_s):
    folder = tmp_path / "locks"
    monkeypatch.setenv("SACSCALE_LOCK_DIR", str(folder))
    with locks.private_lock("x.lock", "the x lock", 0, note="run n2"):
        code = _SECOND.replace("'the x lock', 0)", f"'the x lock', {wait_s})")
        out = subprocess.run([sys.executable, "-c", code], env={**os.environ, "SACSCALE_LOCK_DIR": str(folder)},
                             capture_output=True, text=True, timeout=60).stdout
    assert out.startswith("HELD") and "(run n2)" in out, out


@pytest.mark.parametrize("wait_s", [float("nan"), float("inf"), -1.0])
def test_a_wait_that_is_no_bound_is_refused(monkeypatch, tmp_path, wait_s):
    """nan compared false with every time waited: a held lock was waited for for ever."""
    monkeypatch.setenv("SACSCALE_LOCK_DIR", str(tmp_path / "locks"))
    with pytest.raises(locks.LockError, match=r"the x lock: a wait of .* s is no bound"):
        with locks.private_lock("x.lock", "the x lock", wait_s):
            pass


def test_a_lock_file_that_cannot_be_opened_is_named_for_its_reason(monkeypatch, tmp_path):
    """An immutable lock file (EPERM) was said to be refused as `a symbolic link`: the note
    belongs to O_NOFOLLOW's ELOOP only."""
    import errno
    folder = tmp_path / "locks"
    monkeypatch.setenv("SACSCALE_LOCK_DIR", str(folder))
    with locks.private_lock("x.lock", "the x lock", 0):
        pass
    real_open = os.open

    def immutable(name, flags, *args, **kwargs):
        if name == "x.lock":
            raise PermissionError(errno.EPERM, os.strerror(errno.EPERM))
        return real_open(name, flags, *args, **kwargs)
    monkeypatch.setattr(locks.os, "open", immutable)
    with pytest.raises(locks.LockError) as refused:
        with locks.private_lock("x.lock", "the x lock", 0):
            pass
    assert str(refused.value) == f"lock file {folder / 'x.lock'}: cannot open it (Operation not permitted)"
