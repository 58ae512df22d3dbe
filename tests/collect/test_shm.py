import numpy as np
import pytest

from sacscale.collect.shm import SlotSpec, TransitionSlots, WeightBlock, unlink_prefix


@pytest.fixture
def prefix():
    import secrets

    p = f"sacscale_test_{secrets.token_hex(4)}"
    yield p
    unlink_prefix(p)


def test_weight_block_roundtrip_and_versions(prefix):
    writer = WeightBlock(f"{prefix}_w", 10, create=True)
    reader = WeightBlock(f"{prefix}_w", 10, create=False)
    out = np.zeros(10, dtype=np.float32)
    assert reader.read_into(out) == 0
    v = writer.publish(np.arange(10, dtype=np.float32))
    assert v == 1 and reader.version() == 1
    assert reader.read_into(out) == 1
    np.testing.assert_array_equal(out, np.arange(10))
    reader.close()
    writer.close()


def test_weight_block_refuses_torn_read(prefix):
    block = WeightBlock(f"{prefix}_w", 4, create=True)
    block.seq[0] = 3  # a writer stuck mid-write: no consistent snapshot exists
    with pytest.raises(RuntimeError, match="no consistent snapshot within"):
        block.read_into(np.zeros(4, dtype=np.float32), timeout_s=0.05)
    block.close()


def test_slots_are_shared_between_creator_and_attacher(prefix):
    spec = SlotSpec(num_envs=3, actor_dim=5, critic_dim=6, act_dim=2)
    owner = TransitionSlots(f"{prefix}_s", spec, create=True)
    other = TransitionSlots(f"{prefix}_s", spec, create=False)
    other.slots[1]["reward"][:] = [1, 2, 3]
    other.stats[1][0] = 7.5
    np.testing.assert_array_equal(owner.slots[1]["reward"], [1, 2, 3])
    assert owner.slots[0]["reward"].sum() == 0  # slots do not alias
    assert owner.stats[1][0] == 7.5
    other.close()
    owner.close()
    import os

    assert not os.path.exists(f"/dev/shm/{prefix}_s")  # the creator unlinks


def test_weight_block_waits_out_a_preempted_writer(prefix):
    import threading
    import time

    block = WeightBlock(f"{prefix}_w", 4, create=True)
    block.seq[0] = 1  # writer parked mid-write ...
    block.flat[:] = 3.0

    def finish():
        time.sleep(0.1)  # ... for longer than a tight retry loop would wait
        block.seq[0] = 2

    threading.Thread(target=finish).start()
    out = np.zeros(4, dtype=np.float32)
    assert block.read_into(out, timeout_s=5.0) == 1
    np.testing.assert_array_equal(out, 3.0)
    block.close()
