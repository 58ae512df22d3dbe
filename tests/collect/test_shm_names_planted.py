"""A block's name in /dev/shm cannot be planted in advance: another local user who guesses it
(the prefix holds the trainer's pid, and a rank's first block shows the prefix of the
others) and makes a file or link there first must not stop the run, nor be written through."""

import os
import stat

import pytest

from sacscale.collect import shm
from sacscale.collect.shm import SharedMemoryError, SlotSpec, TransitionSlots, WeightBlock


@pytest.fixture
def shm_dir(tmp_path, monkeypatch):
    folder = tmp_path / "shm"
    folder.mkdir()
    folder.chmod(0o1777)
    monkeypatch.setattr(shm, "SHM_DIR", str(folder))
    return folder


@pytest.mark.parametrize("planted", ["file", "link", "fifo"])
def test_a_block_name_planted_in_advance_does_not_stop_the_block(shm_dir, tmp_path, planted):
    victim = tmp_path / "victim"
    victim.write_bytes(b"untouched")
    name = "sacscale_4242_abcdef_r1_slots"
    at = shm_dir / name
    {"file": lambda: at.write_bytes(b"x"), "link": lambda: at.symlink_to(victim),
     "fifo": lambda: os.mkfifo(at)}[planted]()
    block = TransitionSlots(name, SlotSpec(4, 3, 3, 2))
    try:
        block.slots[0]["reward"][:] = 1.0
        assert block.slots[0]["reward"].sum() == 4.0
    finally:
        block.close()
    assert victim.read_bytes() == b"untouched"
    assert [p.name for p in shm_dir.iterdir()] == [name]  # the planted one, left alone; ours unlinked


def test_every_name_taken_is_a_named_error(shm_dir, monkeypatch):
    monkeypatch.setattr(shm.secrets, "token_hex", lambda n: "00" * n)
    (shm_dir / f"sacscale_1_abcdef_r0_weights_{'00' * 8}").write_bytes(b"")
    with pytest.raises(SharedMemoryError, match=r"block sacscale_1_abcdef_r0_weights: every name tried .* taken"):
        WeightBlock("sacscale_1_abcdef_r0_weights", 10)


def test_a_block_file_is_private_and_gone_from_the_folder(shm_dir):
    block = WeightBlock("sacscale_7_abcdef_r0_weights", 10)
    try:
        assert list(shm_dir.iterdir()) == []
        assert stat.S_IMODE(os.fstat(block._fd).st_mode) == 0o600
    finally:
        block.close()
