"""Small learner setups for the CPU tests of sacscale.learn (seconds on 2 cores)."""

import types

import pytest
import torch

from sacscale.learn.config import SACConfig
from sacscale.learn.learner import FastSACLearner, Randoms

SMALL = dict(batch_size=32, actor_hidden=(32, 16), critic_hidden=(48, 24), num_atoms=21,
             replay_per_env=64)
NUM_ENVS = 4          # replay capacity 256 rows
ROWS = 200            # rows put into the replay by fill()


def small_cfg(**overrides) -> SACConfig:
    return SACConfig(**{**SMALL, **overrides})


def transitions(n=ROWS, seed=0, cfg: SACConfig | None = None) -> dict:
    cfg = cfg or small_cfg()
    g = torch.Generator().manual_seed(seed)
    return dict(
        actor_obs=torch.randn(n, cfg.actor_obs_dim, generator=g),
        critic_obs=torch.randn(n, cfg.critic_obs_dim, generator=g),
        action=torch.rand(n, cfg.action_dim, generator=g) * 2 - 1,
        reward=torch.randn(n, generator=g),
        next_actor_obs=torch.randn(n, cfg.actor_obs_dim, generator=g),
        next_critic_obs=torch.randn(n, cfg.critic_obs_dim, generator=g),
        terminated=torch.rand(n, generator=g) < 0.1,
    )


def make_learner(cfg=None, seed=0, rows=ROWS, external=False, device="cpu", **kwargs) -> FastSACLearner:
    cfg = cfg or small_cfg()
    learner = FastSACLearner(cfg, NUM_ENVS, device, seed=seed, **kwargs)
    data = transitions(rows, cfg=cfg)
    learner.replay.add(**{k: v.to(device) for k, v in data.items()})
    if external:
        learner.use_external_randoms()
    return learner


def random_randoms(cfg: SACConfig, rows: int, seed: int, batch_size: int | None = None) -> Randoms:
    """A Randoms struct drawn on the CPU from its own generator."""
    g = torch.Generator().manual_seed(seed)
    r = Randoms.empty(cfg, "cpu", batch_size)
    r.indices.copy_(torch.randint(0, rows, r.indices.shape, generator=g))
    r.target_noise.normal_(generator=g)
    r.actor_noise.normal_(generator=g)
    return r


def state(learner) -> dict:
    return {k: v.detach().clone().cpu() for k, v in learner.state_tensors().items()}


@pytest.fixture
def learn():
    """Helpers as one namespace (conftest modules are not importable by name)."""
    return types.SimpleNamespace(small_cfg=small_cfg, transitions=transitions, make_learner=make_learner,
                                 random_randoms=random_randoms, state=state, ROWS=ROWS, NUM_ENVS=NUM_ENVS)
