import pytest
import torch

from sacscale.learn.replay import FIELDS, ReplayBuffer, transition_layout

DIMS = dict(actor_obs_dim=3, critic_obs_dim=4, action_dim=2)


def rows(start, n):
    """Transitions whose every value encodes its row number (start..start+n-1)."""
    k = torch.arange(start, start + n, dtype=torch.float32)
    return dict(
        actor_obs=k[:, None].repeat(1, 3), critic_obs=k[:, None].repeat(1, 4) + 0.5,
        action=k[:, None].repeat(1, 2) * -1, reward=k * 10, next_actor_obs=k[:, None].repeat(1, 3) + 1,
        next_critic_obs=k[:, None].repeat(1, 4) + 1.5, terminated=(k.long() % 2 == 0),
    )


def test_layout_is_contiguous_and_ordered():
    layout = transition_layout(98, 101, 29)
    assert list(layout) == list(FIELDS)
    assert layout["actor_obs"] == slice(0, 98)
    assert layout["terminated"].stop == 2 * 98 + 2 * 101 + 29 + 2


def test_add_wraps_around():
    buf = ReplayBuffer(8, **DIMS, device="cpu")
    buf.add(**rows(0, 5))
    assert (buf.size, buf.pos, int(buf.size_t)) == (5, 5, 5)
    buf.add(**rows(5, 5))  # rows 5,6,7 at positions 5..7, rows 8,9 at positions 0,1
    assert (buf.size, buf.pos, int(buf.size_t)) == (8, 2, 8)
    assert buf.reward.tolist() == [80, 90, 20, 30, 40, 50, 60, 70]
    assert buf.terminated.tolist() == [1, 0, 1, 0, 1, 0, 1, 0]
    assert buf.critic_obs[1].tolist() == [9.5] * 4
    assert buf.next_actor_obs[0].tolist() == [9.0] * 3


def test_add_more_than_capacity_keeps_newest():
    buf = ReplayBuffer(8, **DIMS, device="cpu")
    buf.add(**rows(0, 3))
    buf.add(**rows(3, 20))  # rows 3..22; newest 8 are 15..22, row i at position i % 8
    assert buf.size == 8 and buf.pos == (3 + 20) % 8
    assert buf.reward.tolist() == [10 * i for i in (16, 17, 18, 19, 20, 21, 22, 15)]


def test_add_packed_matches_add():
    a, b = ReplayBuffer(8, **DIMS, device="cpu"), ReplayBuffer(8, **DIMS, device="cpu")
    for start in (0, 5, 10):
        r = rows(start, 5)
        a.add(**r)
        packed = torch.cat([r[name].float().reshape(5, -1) for name in FIELDS], dim=1)
        b.add_packed(packed)
    assert torch.equal(a.storage, b.storage) and (a.size, a.pos) == (b.size, b.pos)


def test_gather_returns_fields():
    buf = ReplayBuffer(8, **DIMS, device="cpu")
    buf.add(**rows(0, 6))
    batch = buf.gather(torch.tensor([4, 1]))
    assert batch["reward"].tolist() == [40, 10]
    assert batch["terminated"].tolist() == [1, 0]
    assert batch["action"].shape == (2, 2) and batch["actor_obs"].shape == (2, 3)


def test_rejects_bad_shapes():
    buf = ReplayBuffer(8, **DIMS, device="cpu")
    bad = rows(0, 3)
    bad["critic_obs"] = torch.zeros(3, 5)
    with pytest.raises(ValueError, match="critic_obs"):
        buf.add(**bad)
    with pytest.raises(ValueError):
        buf.add_packed(torch.zeros(3, 7))


def test_the_memory_check_counts_a_replay_row_as_the_buffer_stores_it():
    """checks.REPLAY_ROW_BYTES (the trainer's and the plan's memory check, which import no
    torch) is the buffer's float32 row and its valid flag."""
    from sacscale.checks import REPLAY_ROW_BYTES
    from sacscale.learn.config import SACConfig

    cfg = SACConfig()
    buffer = ReplayBuffer(3, cfg.actor_obs_dim, cfg.critic_obs_dim, cfg.action_dim, "cpu")
    per_row = buffer.storage.element_size() * buffer.storage.shape[1] + buffer.valid.element_size()
    assert REPLAY_ROW_BYTES == per_row
