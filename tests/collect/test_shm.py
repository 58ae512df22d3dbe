import os
import subprocess
import sys

import numpy as np
import pytest

from sacscale.collect.shm import (Flag, SharedMemoryError, Signal, SlotSpec, TransitionSlots, WeightBlock,
                                  clean_stale, unlink_prefix)


@pytest.fixture
def prefix():
    import secrets

    # the trainer's name pattern (a pid and a 6-hex token), with a pid of this test
    p = f"sacscale_{os.getpid()}_{secrets.token_hex(3)}"
    yield p
    unlink_prefix(p)


def test_weight_block_roundtrip_and_versions(prefix):
    writer = WeightBlock(f"{prefix}_w", 10)
    reader = writer.attach_copy()
    out = np.zeros(10, dtype=np.float32)
    assert reader.read_into(out) == 0
    v = writer.publish(np.arange(10, dtype=np.float32))
    assert v == 1 and reader.version() == 1
    assert reader.read_into(out) == 1
    np.testing.assert_array_equal(out, np.arange(10))
    reader.close()
    writer.close()


def test_weight_block_refuses_torn_read(prefix):
    block = WeightBlock(f"{prefix}_w", 4)
    block.seq[0] = 3  # a writer stuck mid-write: no consistent snapshot exists
    with pytest.raises(RuntimeError, match="no consistent snapshot within"):
        block.read_into(np.zeros(4, dtype=np.float32), timeout_s=0.05)
    block.close()


def test_torn_read_gives_up_at_once_on_a_stop_request(prefix):
    """A collector must not spin on a writer that will never finish once it is told to stop."""
    import time

    block = WeightBlock(f"{prefix}_w", 4)
    block.seq[0] = 3
    t0 = time.monotonic()
    with pytest.raises(InterruptedError):
        block.read_into(np.zeros(4, dtype=np.float32), timeout_s=30, give_up=lambda: True)
    assert time.monotonic() - t0 < 1
    block.close()


def test_slots_are_shared_and_never_named(prefix):
    spec = SlotSpec(num_envs=3, actor_dim=5, critic_dim=6, act_dim=2)
    owner = TransitionSlots(f"{prefix}_s", spec)
    assert not os.path.exists(f"/dev/shm/{prefix}_s")  # unlinked as soon as it was made
    other = owner.attach_copy()
    other.slots[1]["reward"][:] = [1, 2, 3]
    other.stats[1][0] = 7.5
    np.testing.assert_array_equal(owner.slots[1]["reward"], [1, 2, 3])
    assert owner.slots[0]["reward"].sum() == 0  # slots do not alias
    assert owner.stats[1][0] == 7.5
    other.close()
    owner.close()


def _child_writes(slots, done):
    slots.slots[0]["reward"][:] = 42.0
    done.release()


def test_a_spawned_process_maps_the_block_through_its_descriptor(prefix):
    import multiprocessing as mp

    spec = SlotSpec(num_envs=2, actor_dim=1, critic_dim=1, act_dim=1)
    slots = TransitionSlots(f"{prefix}_s", spec)
    done = Signal(0)
    proc = mp.get_context("spawn").Process(target=_child_writes, args=(slots, done))
    proc.start()
    assert done.acquire(timeout=60)
    proc.join(30)
    assert proc.exitcode == 0
    np.testing.assert_array_equal(slots.slots[0]["reward"], 42.0)
    slots.close()
    done.close()


def test_signal_counts_and_times_out():
    sig = Signal(1)
    assert sig.acquire(timeout=0)
    assert not sig.acquire(timeout=0.05)
    sig.release()
    sig.release()
    assert sig.acquire(timeout=0) and sig.acquire(timeout=0) and not sig.acquire(timeout=0)
    flag = Flag()
    assert not flag.is_set()
    flag.set()
    flag.set()
    assert flag.is_set() and flag.is_set()  # never consumed
    for obj in (sig, flag):
        obj.close()


def test_full_shm_is_a_named_error(tmp_path, monkeypatch, prefix):
    """fallocate reserves the block: a too small /dev/shm fails at creation, naming the
    block and the sizes (here a tmp directory stands in; ENOSPC is faked by a huge size)."""
    from sacscale.collect import shm

    monkeypatch.setattr(shm, "SHM_DIR", str(tmp_path))
    with pytest.raises(SharedMemoryError, match=rf"not enough shared memory for block {prefix}_w: .* MB needed"):
        WeightBlock(f"{prefix}_w", 2**62 // 4)
    assert list(tmp_path.iterdir()) == []  # no file left


def test_clean_stale_removes_only_entries_of_dead_creators(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    live = os.getpid()
    names = [f"sacscale_{dead.pid}_abcdef_r0_slots", f"sacscale_{live}_abcdef_r0_slots",
             "sacscale_notapid_r0_slots", "sem.mp-something"]
    for name in names:
        (tmp_path / name).write_bytes(b"x")
    held = tmp_path / f"sacscale_{dead.pid}_123456_r0_weights"  # dead pid, but a live process holds it
    held.write_bytes(b"x")
    with open(held, "rb"):
        removed = clean_stale(str(tmp_path))
    assert removed == [names[0]]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*names[1:], held.name])
