"""sacscale.locks.private_lock, the lock of the pipeline's machine-wide training lock: a
second process asking for the same name waits until the first releases it, another name
does not wait, a stop signal ends the wait, the kernel frees the lock of a killed holder,
and the folder, the file and the holder's record are safe from other users."""

import os
import signal
import subprocess
import sys
import time

import pytest

from sacscale.locks import LockError, describe_holder, lock_dir, private_lock

HOLD = """
import sys, time
from sacscale.locks import private_lock
with private_lock(f"test-{sys.argv[1]}.lock", "a test lock", 60.0):
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
"""


def exclusive(key: str, check_stop=None, say=None, wait_s: float = 60.0):
    return private_lock(f"test-{key}.lock", "a test lock", wait_s, check_stop, say)


def _holder(key: str, seconds: float, env: dict) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", HOLD, key, str(seconds)], stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout.readline().strip() == "held"
    return proc


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("SACSCALE_LOCK_DIR", str(tmp_path))
    return {**os.environ, "SACSCALE_LOCK_DIR": str(tmp_path)}


def test_same_gpu_waits_for_the_holder_and_another_gpu_does_not(env):
    holder = _holder("gpu-A", 3.0, env)
    try:
        said = []
        with exclusive("gpu-B", say=said.append) as waited:
            assert waited < 1.0 and said == []
        t_ask = time.monotonic()
        with exclusive("gpu-A", say=said.append) as waited:
            pass
        # only once the holder let go: it holds the lock 3 s after saying so (its process may
        # still be exiting: the lock goes with the file's close, before the exit)
        assert waited > 1.0 and time.monotonic() - t_ask >= waited
        assert said and f"pid {holder.pid}" in said[0]
    finally:
        holder.kill()
        holder.wait()


def test_a_stop_ends_the_wait(env):
    holder = _holder("gpu-A", 60.0, env)
    try:
        calls = []

        def check_stop():
            calls.append(1)
            if len(calls) >= 3:
                raise KeyboardInterrupt("stop")

        t0 = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            with exclusive("gpu-A", check_stop=check_stop):
                pytest.fail("the lock was taken while held")
        assert time.monotonic() - t0 < 30
    finally:
        holder.kill()
        holder.wait()


def test_a_killed_holder_leaves_no_lock(env):
    holder = _holder("gpu-A", 60.0, env)
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    with exclusive("gpu-A") as waited:
        assert waited < 5


# --- safety: another user's links, folders and bytes -------------------------------------

def test_default_folder_is_the_users_own_and_private(tmp_path, monkeypatch):
    monkeypatch.delenv("SACSCALE_LOCK_DIR", raising=False)
    import sacscale.lock_folder

    monkeypatch.setattr(sacscale.lock_folder, "DEFAULT_BASE", tmp_path)  # /tmp, whatever TMPDIR says
    assert lock_dir() == tmp_path / f"sacscale-{os.getuid()}"
    with exclusive("gpu-A") as waited:
        assert waited < 1.0
    st = (tmp_path / f"sacscale-{os.getuid()}").lstat()
    assert st.st_uid == os.getuid() and (st.st_mode & 0o777) == 0o700


def test_a_planted_link_is_refused_and_its_target_untouched(env, tmp_path):
    victim = tmp_path.parent / f"{tmp_path.name}-victim.txt"
    victim.write_text("keep me")
    victim.chmod(0o600)
    (tmp_path / "test-gpu-A.lock").symlink_to(victim)
    with pytest.raises(LockError, match="symbolic link"):
        with exclusive("gpu-A"):
            pytest.fail("took a lock through a link")
    assert victim.read_text() == "keep me" and (victim.stat().st_mode & 0o777) == 0o600


def test_a_linked_or_shared_folder_is_refused(tmp_path, monkeypatch):
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(real)
    monkeypatch.setenv("SACSCALE_LOCK_DIR", str(tmp_path / "link"))
    with pytest.raises(LockError, match="symbolic link"):
        with exclusive("gpu-A"):
            pass
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)  # what /tmp itself is
    monkeypatch.setenv("SACSCALE_LOCK_DIR", str(shared))
    with pytest.raises(LockError, match="writable by other users"):
        with exclusive("gpu-A"):
            pass
    assert list(shared.iterdir()) == []


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to make a folder of another user's")
def test_another_users_folder_is_refused(tmp_path, monkeypatch):
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o700)
    os.chown(theirs, 65534, 65534)
    monkeypatch.setenv("SACSCALE_LOCK_DIR", str(theirs))
    with pytest.raises(LockError, match="belongs to uid 65534"):
        with exclusive("gpu-A"):
            pass


def test_an_existing_lock_file_keeps_its_mode(env, tmp_path):
    lock = tmp_path / "test-gpu-A.lock"
    lock.write_text("")
    lock.chmod(0o640)
    with exclusive("gpu-A"):
        pass
    assert (lock.stat().st_mode & 0o777) == 0o640


def test_the_wait_is_bounded_and_names_the_holder(env):
    holder = _holder("gpu-A", 60.0, env)
    try:
        t0 = time.monotonic()
        with pytest.raises(LockError, match=rf"held by pid {holder.pid}\b"):
            with exclusive("gpu-A", wait_s=1.0):
                pytest.fail("the lock was taken while held")
        assert time.monotonic() - t0 < 10
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.parametrize("raw, shown", [
    (b"pid 123", "pid 123"),
    (b"pid 123 run p_r1_n1\n", "pid 123 (run p_r1_n1)"),
    (b"pid 123 hand probe", "`sacscale probe` (pid 123; not a measured run)"),
    (b"pid 123 run \x1b]0;owned\x07", "pid 123"),
    (b"\x1b[2J\x1b]0;owned\x07", "another process"),
    (b"pid 12\x1b[31m", "another process"),
    (b"\xff\xfe", "another process"),
])
def test_the_holder_is_named_from_parsed_fields_only(raw, shown):
    assert describe_holder(raw) == shown


def test_a_lock_folder_that_cannot_be_made_is_named(tmp_path, monkeypatch):
    monkeypatch.setenv("SACSCALE_LOCK_DIR", str(tmp_path / "missing" / "locks"))
    with pytest.raises(LockError, match="lock folder .*/missing/locks: cannot create it"):
        with exclusive("gpu-A"):
            pass


def test_a_relative_lock_folder_is_refused(monkeypatch):
    monkeypatch.setenv("SACSCALE_LOCK_DIR", "locks")
    with pytest.raises(LockError, match="SACSCALE_LOCK_DIR='locks' is a relative path"):
        lock_dir()
