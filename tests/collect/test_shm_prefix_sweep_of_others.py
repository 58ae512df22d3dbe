"""A trainer's end removed every /dev/shm entry under its blocks' prefix: another local user
who watched /dev/shm learnt the prefix (a block's name lives for microseconds, long enough
for inotify) and had her own file there removed by root's trainer. Only this user's regular
files named as the trainer names its blocks are removed now."""

import os
import secrets

import pytest

from sacscale.collect import shm


@pytest.fixture
def shm_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(shm, "SHM_DIR", str(tmp_path))
    return tmp_path


def block_name(prefix: str, kind: str) -> str:
    return f"{prefix}_{kind}_{secrets.token_hex(8)}"


def test_only_this_users_blocks_under_the_prefix_are_removed(shm_dir):
    prefix = f"sacscale_{os.getpid()}_abcdef"
    ours = [block_name(f"{prefix}_r0", "slots"), block_name(f"{prefix}_r1", "weights")]
    left = [f"{prefix}_r0_eve_data", f"{prefix}_r0_slots_notrandom", "sacscale_1_abcdef_r0_slots_" + "0" * 16]
    for name in ours + left:
        (shm_dir / name).write_bytes(b"x")
    link = shm_dir / block_name(f"{prefix}_r0", "weights")
    link.symlink_to(shm_dir / left[0])
    assert sorted(shm.unlink_prefix(prefix)) == sorted(ours)
    assert sorted(p.name for p in shm_dir.iterdir()) == sorted([*left, link.name])


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make another user's file (only root could remove it)")
def test_another_users_file_named_as_a_block_is_left(shm_dir):
    prefix = f"sacscale_{os.getpid()}_abcdef_r0"
    theirs = shm_dir / block_name(prefix, "slots")
    theirs.write_bytes(b"x")
    os.chown(theirs, 65534, 65534)
    assert shm.unlink_prefix(prefix) == []
    assert theirs.exists()


def test_a_prefix_holding_glob_characters_matches_itself_only(shm_dir):
    near = shm_dir / block_name("sacscale_1_abcdef_r0", "slots")
    near.write_bytes(b"x")
    assert shm.unlink_prefix("sacscale_1_abcde?_r0") == []
    assert near.exists()


def test_one_ranks_prefix_leaves_another_ranks_blocks(shm_dir):
    """Rank 1's end must not take rank 10's block (its name begins as rank 1's does); the
    job's prefix takes every rank's."""
    job = "sacscale_1_abcdef"
    rank1, rank10 = block_name(f"{job}_r1", "slots"), block_name(f"{job}_r10", "slots")
    for name in (rank1, rank10):
        (shm_dir / name).write_bytes(b"x")
    assert shm.unlink_prefix(f"{job}_r1") == [rank1]
    assert shm.unlink_prefix(job) == [rank10]
