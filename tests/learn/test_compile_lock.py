"""The per-GPU lock around a trainer's first update (compile, warm-up, capture): a second
process with the same GPU key waits until the first releases it, a different key does not
wait, a stop signal ends the wait, and the kernel frees the lock of a killed holder."""

import os
import signal
import subprocess
import sys
import time

import pytest

from sacscale.learn.compile_lock import exclusive, first_update_lock

HOLD = """
import sys, time
from sacscale.learn.compile_lock import exclusive
with exclusive(sys.argv[1]):
    print("held", flush=True)
    time.sleep(float(sys.argv[2]))
"""


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


def test_cpu_devices_take_no_lock(tmp_path, env):
    import torch

    with first_update_lock(torch.device("cpu")) as waited:
        assert waited == 0.0
    assert list(tmp_path.iterdir()) == []
