"""The learner's state tensors and buckets carry the names sacscale.learn.state_names gives
(torch-free, so verify can hold a probe record to them): the keys of state_tensors(), which
of them a seed draws, the target critic a copy of the critic, log-alpha one number."""

import pytest
import torch

from sacscale.learn.state_names import COPIES, ONE_NUMBER, SEEDED_STATE, state_tensor_names


@pytest.mark.parametrize("obs_norm", [False, True])
def test_state_tensors_carry_the_names(learn, obs_norm):
    learner = learn.make_learner(learn.small_cfg(obs_norm=obs_norm), compile=False, cuda_graph=False)
    assert tuple(learner.state_tensors()) == state_tensor_names(obs_norm)


def test_only_the_networks_follow_the_seed_and_log_alpha_is_one_number(learn):
    one, other = (learn.state(learn.make_learner(seed=s, compile=False, cuda_graph=False)) for s in (0, 1000))
    differ = {k for k in one if not torch.equal(one[k], other[k])}
    assert differ == set(SEEDED_STATE)
    for copy, original in COPIES.items():
        assert torch.equal(one[copy], one[original])
    assert [one[k].numel() for k in ONE_NUMBER if k in one] == [1]
    learner = learn.make_learner(compile=False, cuda_graph=False)
    assert learner.flat["alpha"].data.numel() == 1  # the "alpha" bucket holds log-alpha's one gradient
