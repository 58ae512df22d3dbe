"""Observation normalisation: exact running statistics, the same transform in the learner
and in the collector's CPU actor, merged inside the iteration, identical across ranks."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch

from sacscale.collect.collector import _flat_actor
from sacscale.learn.networks import Actor
from sacscale.learn.normalizer import RunningMeanVar


def _numpy_stats(rows):
    x = np.concatenate(rows).astype(np.float64)
    return x.mean(0), x.var(0)


def test_running_statistics_equal_those_of_all_rows_at_once():
    g = torch.Generator().manual_seed(0)
    stats = RunningMeanVar(5, "cpu")
    seen = []
    for i, n in enumerate((7, 1, 30, 12)):
        x = torch.randn(n, 5, generator=g) * (1 + i) + 3 * i  # batches from different distributions
        seen.append(x.numpy())
        stats.merge_(x.mean(0), x.var(0, unbiased=False), torch.tensor(float(n), dtype=torch.float64))
    mean, var = _numpy_stats(seen)
    assert float(stats.count) == 50
    np.testing.assert_allclose(stats.mean.numpy(), mean, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(stats.var.numpy(), var, rtol=1e-4)


def test_merging_zero_rows_changes_nothing():
    stats = RunningMeanVar(3, "cpu")
    zero = torch.zeros((), dtype=torch.float64)
    stats.merge_(torch.full((3,), 9.0), torch.full((3,), 4.0), zero)
    assert float(stats.count) == 0 and torch.equal(stats.mean, torch.zeros(3)) and torch.equal(stats.var, torch.ones(3))
    stats.merge_(torch.tensor([1.0, 2.0, 3.0]), torch.tensor([0.5, 0.5, 0.5]), torch.tensor(4.0, dtype=torch.float64))
    before = (stats.mean.clone(), stats.var.clone())
    stats.merge_(torch.full((3,), 100.0), torch.full((3,), 100.0), zero)
    assert torch.equal(stats.mean, before[0]) and torch.equal(stats.var, before[1])


def _norm_learner(learn, **cfg):
    return learn.make_learner(learn.small_cfg(obs_norm=True, **cfg))


def test_learner_statistics_cover_every_observed_row_and_set_both_normalisers(learn):
    learner = _norm_learner(learn, learning_starts=256)  # never ready: observe() merges right away
    rows = [learn.transitions(learn.NUM_ENVS, seed=s) for s in range(6)]
    for r in rows:
        learner.observe(r["actor_obs"] * 3 + 1, r["critic_obs"] * 0.5 - 2)
    for name, scale, shift in (("actor_obs", 3, 1), ("critic_obs", 0.5, -2)):
        mean, var = _numpy_stats([r[name].numpy() * scale + shift for r in rows])
        stats = learner.obs_stats[name]
        assert float(stats.count) == 6 * learn.NUM_ENVS
        np.testing.assert_allclose(stats.mean.numpy(), mean, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(stats.var.numpy(), var, rtol=1e-4, atol=1e-6)
    eps = learner.cfg.obs_norm_eps
    torch.testing.assert_close(learner.actor.obs_norm.shift, learner.obs_stats["actor_obs"].mean)
    torch.testing.assert_close(learner.critic_norm.scale, 1 / (learner.obs_stats["critic_obs"].var.sqrt() + eps))


def test_once_learning_runs_the_rows_are_merged_by_the_update_and_only_once(learn):
    learner = _norm_learner(learn)
    assert learner.ready()
    r = learn.transitions(learn.NUM_ENVS, seed=3)
    learner.observe(r["actor_obs"], r["critic_obs"])
    assert float(learner.obs_stats["actor_obs"].count) == 0  # waits for the iteration
    learner.update()
    assert float(learner.obs_stats["actor_obs"].count) == learn.NUM_ENVS
    mean = learner.obs_stats["actor_obs"].mean.clone()
    learner.update()  # no new rows: nothing merged again
    assert float(learner.obs_stats["actor_obs"].count) == learn.NUM_ENVS
    assert torch.equal(learner.obs_stats["actor_obs"].mean, mean)


def test_the_collectors_cpu_actor_acts_exactly_as_the_learners_actor(learn):
    learner = _norm_learner(learn, learning_starts=256)
    for s in range(3):
        r = learn.transitions(learn.NUM_ENVS, seed=s)
        learner.observe(r["actor_obs"] * 4 + 2, r["critic_obs"])
    # the output heads start at zero: give the actor some weights to tell inputs apart
    learner.flat["actor"].data.add_(0.1 * torch.randn(learner.flat["actor"].data.shape,
                                                      generator=torch.Generator().manual_seed(1)))
    published = learner.actor_flat()
    assert published.numel() == learner.actor.flat_numel() == learner.flat["actor"].data.numel() + 2 * 98
    cfg = learner.cfg
    kwargs = dict(obs_dim=cfg.actor_obs_dim, action_dim=cfg.action_dim, hidden=cfg.actor_hidden, obs_norm=True)
    actor, flat = _flat_actor(kwargs, published.numel())
    flat.copy_(published)
    obs = torch.randn(16, cfg.actor_obs_dim) * 4 + 2
    with torch.no_grad():
        expected = learner.actor.mean_and_log_std(obs)[0]
        got = actor.mean_and_log_std(obs)[0]
        unnormalised = Actor(**{**kwargs, "obs_norm": False})
        unnormalised.load_flat(published[:learner.flat["actor"].data.numel()])
    torch.testing.assert_close(got, expected, rtol=0, atol=0)
    assert not torch.allclose(unnormalised.mean_and_log_std(obs)[0], expected)  # the transform matters


TWO_RANKS = textwrap.dedent('''
    import os, sys, torch, torch.distributed as dist, torch.multiprocessing as mp
    from sacscale.parallel.grad_sync import allreduce_hooks
    from sacscale.learn.config import SACConfig
    from sacscale.learn.learner import FastSACLearner

    def rank(r, port, out):
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        dist.init_process_group("gloo", rank=r, world_size=2)
        torch.set_num_threads(1)
        cfg = SACConfig(batch_size=16, actor_hidden=(16,), critic_hidden=(16,), num_atoms=11,
                        replay_per_env=64, obs_norm=True, learning_starts=24)
        learner = FastSACLearner(cfg, 4, "cpu", seed=r)
        learner.set_gradient_graph_hooks(allreduce_hooks(2))
        for it in range(10):
            g = torch.Generator().manual_seed(100 * it + r)   # each rank sees its own rows
            rows = dict(actor_obs=torch.randn(4, 98, generator=g) * (1 + r) + r,
                        critic_obs=torch.randn(4, 101, generator=g) - 3 * r,
                        action=torch.rand(4, 29, generator=g), reward=torch.randn(4, generator=g),
                        next_actor_obs=torch.randn(4, 98, generator=g),
                        next_critic_obs=torch.randn(4, 101, generator=g),
                        terminated=torch.zeros(4))
            learner.replay.add(**rows)
            learner.observe(rows["actor_obs"], rows["critic_obs"])
            torch.save(rows, f"{out}/rows_{r}_{it}.pt")
            if learner.ready():
                learner.update()
        torch.save({k: v.clone() for k, v in learner.state_tensors().items()}, f"{out}/state_{r}.pt")
        dist.destroy_process_group()

    if __name__ == "__main__":
        import socket
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]
        mp.spawn(rank, args=(port, sys.argv[1]), nprocs=2)
''')


@pytest.mark.slow
def test_normaliser_is_identical_on_two_gloo_ranks_and_covers_both_ranks_rows(tmp_path):
    script = tmp_path / "two_ranks.py"
    script.write_text(TWO_RANKS)
    subprocess.run([sys.executable, str(script), str(tmp_path)], check=True, timeout=300)
    s0, s1 = (torch.load(tmp_path / f"state_{r}.pt") for r in (0, 1))
    for key in s0:
        if "obs" in key:
            assert torch.equal(s0[key], s1[key]), key  # bit-identical across ranks
    for name in ("actor_obs", "critic_obs"):
        rows = [torch.load(tmp_path / f"rows_{r}_{it}.pt")[name].numpy() for it in range(10) for r in (0, 1)]
        mean, var = _numpy_stats(rows)
        assert float(s0[f"{name}_count"]) == 10 * 4  # per-rank rows (equal on every rank)
        np.testing.assert_allclose(s0[f"{name}_mean"].numpy(), mean, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(s0[f"{name}_var"].numpy(), var, rtol=1e-4, atol=1e-5)
