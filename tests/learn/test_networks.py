import math

import torch
from torch.distributions import Normal, TanhTransform, TransformedDistribution

from sacscale.learn.config import SACConfig
from sacscale.learn.networks import Actor, DistributionalCritic, load_actor_flat


def test_reference_sizes():
    cfg = SACConfig()
    actor, critic = Actor.from_config(cfg), DistributionalCritic.from_config(cfg)
    assert actor.trunk[0].in_features == 98
    assert [m.out_features for m in actor.trunk if isinstance(m, torch.nn.Linear)] == [512, 256, 128]
    assert actor.mean_head.out_features == 29
    for q in (critic.q1, critic.q2):
        trunk = q[0]
        assert trunk[0].in_features == 130
        assert [m.out_features for m in trunk if isinstance(m, torch.nn.Linear)] == [768, 384, 192]
        assert q[1].out_features == 101
        assert any(isinstance(m, torch.nn.LayerNorm) for m in trunk)
    l1, l2 = critic(torch.randn(4, 101), torch.rand(4, 29))
    assert l1.shape == l2.shape == (4, 101)
    assert not torch.equal(l1, l2)  # independent networks


def test_zero_init_heads_give_centred_actions():
    actor = Actor()
    mean, log_std = actor.mean_and_log_std(torch.randn(8, 98))
    assert torch.equal(mean, torch.zeros_like(mean))
    torch.testing.assert_close(log_std, torch.full_like(log_std, -2.5))  # middle of [-5, 0]


def test_log_prob_matches_tanh_gaussian():
    torch.manual_seed(0)
    actor = Actor(obs_dim=6, action_dim=3, hidden=(16,))
    with torch.no_grad():  # non-trivial heads
        actor.mean_head.weight.normal_()
        actor.log_std_head.weight.normal_()
    obs, noise = torch.randn(32, 6), torch.randn(32, 3)
    action, logp = actor(obs, noise)
    mean, log_std = actor.mean_and_log_std(obs)
    dist = TransformedDistribution(Normal(mean, log_std.exp()), [TanhTransform()])
    pre = mean + log_std.exp() * noise
    torch.testing.assert_close(action, torch.tanh(pre))
    # torch's TanhTransform uses the same stable log-det; compare against it at pre-tanh values
    ref = Normal(mean, log_std.exp()).log_prob(pre).sum(-1) - TanhTransform().log_abs_det_jacobian(pre, action).sum(-1)
    torch.testing.assert_close(logp, ref, atol=1e-4, rtol=1e-5)
    assert dist.batch_shape == (32, 3)


def test_log_std_range_and_mean_clip():
    actor = Actor(obs_dim=4, action_dim=2, hidden=(8,))
    with torch.no_grad():
        actor.mean_head.bias.fill_(50.0)
        actor.log_std_head.bias.fill_(100.0)
    mean, log_std = actor.mean_and_log_std(torch.randn(5, 4))
    assert torch.all(mean == 10.0)
    assert torch.all(log_std <= 0.0) and torch.all(log_std >= -5.0)
    with torch.no_grad():
        actor.log_std_head.bias.fill_(-100.0)
    _, log_std = actor.mean_and_log_std(torch.randn(5, 4))
    torch.testing.assert_close(log_std, torch.full_like(log_std, -5.0))


def test_act_modes():
    actor = Actor(obs_dim=4, action_dim=2, hidden=(8,))
    obs = torch.randn(3, 4)
    det = actor.act(obs, deterministic=True)
    assert torch.equal(det, torch.zeros(3, 2))
    noise = torch.randn(3, 2)
    torch.testing.assert_close(actor.act(obs, noise), actor(obs, noise)[0])
    a = actor.act(obs)
    assert a.shape == (3, 2) and (a.abs() < 1).all() and not a.requires_grad


def test_flat_round_trip():
    a, b = Actor(obs_dim=4, action_dim=2, hidden=(8, 8)), Actor(obs_dim=4, action_dim=2, hidden=(8, 8))
    with torch.no_grad():
        for p in a.parameters():
            p.normal_()
    flat = a.flat_parameters()
    assert flat.shape == (a.flat_numel(),) and flat.dtype == torch.float32
    load_actor_flat(b, flat)
    obs = torch.randn(5, 4)
    assert torch.equal(a.act(obs, deterministic=True), b.act(obs, deterministic=True))
    try:
        b.load_flat(flat[:-1])
    except ValueError:
        pass
    else:
        raise AssertionError("a short vector must be rejected")


def test_sizes_are_what_the_spec_says():
    actor = Actor()
    expected = (98 * 512 + 512 + 2 * 512) + (512 * 256 + 256 + 2 * 256) + (256 * 128 + 128 + 2 * 128) \
        + 2 * (128 * 29 + 29)
    assert actor.flat_numel() == expected
    assert math.isclose(Actor().log_std_min, -5.0)
