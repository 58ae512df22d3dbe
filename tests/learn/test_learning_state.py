"""A learner restored from `learning_state()` continues exactly as the original: same
parameters, optimiser moments, temperature, normaliser and random stream (CPU)."""

import io

import pytest
import torch

from sacscale.learn.learner import FastSACLearner


def _feed(learner, learn, it):
    rows = learn.transitions(learn.NUM_ENVS, seed=1000 + it, cfg=learner.cfg)
    learner.replay.add(**rows)
    learner.observe(rows["actor_obs"], rows["critic_obs"])
    if learner.ready():
        learner.update()


def _roundtrip(state):
    buf = io.BytesIO()
    torch.save(state, buf)
    buf.seek(0)
    return torch.load(buf, weights_only=False)


@pytest.mark.parametrize("obs_norm", [False, True], ids=["plain", "obs_norm"])
def test_resumed_learner_equals_the_uninterrupted_one(learn, obs_norm):
    cfg = learn.small_cfg(obs_norm=obs_norm, learning_starts=40)
    straight = FastSACLearner(cfg, learn.NUM_ENVS, "cpu", seed=3)
    first = FastSACLearner(cfg, learn.NUM_ENVS, "cpu", seed=3)
    for it in range(15):  # learning starts with the 10th batch (40 rows)
        _feed(straight, learn, it)
        _feed(first, learn, it)
    saved = _roundtrip(first.learning_state(with_replay=True))
    resumed = FastSACLearner(cfg, learn.NUM_ENVS, "cpu", seed=99)  # another seed: everything must come from the state
    resumed.load_learning_state(saved)
    for it in range(15, 25):
        _feed(straight, learn, it)
        _feed(resumed, learn, it)
    a, b = learn.state(straight), learn.state(resumed)
    assert set(a) == set(b)
    for k in a:
        assert torch.equal(a[k], b[k]), k
    for name in straight.optimizers:
        sa, sb = straight.optimizers[name].state_dict()["state"], resumed.optimizers[name].state_dict()["state"]
        for key in sa[0]:
            assert torch.equal(torch.as_tensor(sa[0][key]), torch.as_tensor(sb[0][key])), (name, key)
    assert straight.iterations == resumed.iterations == 16  # updates from the 10th row batch on
    assert torch.equal(straight.replay.storage, resumed.replay.storage)


def test_without_the_replay_the_resumed_learner_waits_for_rows(learn):
    cfg = learn.small_cfg(learning_starts=40)
    first = FastSACLearner(cfg, learn.NUM_ENVS, "cpu", seed=3)
    for it in range(12):
        _feed(first, learn, it)
    resumed = FastSACLearner(cfg, learn.NUM_ENVS, "cpu", seed=3)
    resumed.load_learning_state(first.learning_state(with_replay=False))
    assert resumed.replay.size == 0 and not resumed.ready()
    assert torch.equal(resumed.state_tensors()["actor"], first.state_tensors()["actor"])


def test_a_state_from_another_configuration_is_refused(learn):
    plain = FastSACLearner(learn.small_cfg(), learn.NUM_ENVS, "cpu")
    normed = FastSACLearner(learn.small_cfg(obs_norm=True), learn.NUM_ENVS, "cpu")
    with pytest.raises(ValueError, match="obs_norm"):
        normed.load_learning_state(plain.learning_state())
    wider = FastSACLearner(learn.small_cfg(actor_hidden=(64, 16)), learn.NUM_ENVS, "cpu")
    with pytest.raises(ValueError, match="shape"):
        wider.load_learning_state(plain.learning_state())


def test_a_random_state_the_generator_refuses_is_named_as_its_field(learn):
    """The rank's own load (after the check before the start) names `learner.rng`, not torch's
    bare message."""
    from sacscale.learn.learning_state import RandomStateRefused

    learner = FastSACLearner(learn.small_cfg(), learn.NUM_ENVS, "cpu")
    state = learner.learning_state()
    state["rng"] = torch.zeros(5056, dtype=torch.uint8)
    with pytest.raises(RandomStateRefused, match="^learner.rng: Invalid mt19937 state$"):
        learner.load_learning_state(state)
