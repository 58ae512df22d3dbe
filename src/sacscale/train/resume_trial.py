"""A resumed policy run once before the run starts: the checkpoint's actor (with its
observation normaliser) on the task's first observations, and its critics on those
observations and actions. Finite weights far too large (x1e20), or a normaliser's absurd
mean, pass every tensor check and gave non-finite actions only in the collector, once the
run had started (exit 1, the run recorded failed)."""

from __future__ import annotations

import torch

from sacscale.learn.networks import Actor, DistributionalCritic
from sacscale.task.g1_model import load_model
from sacscale.task.g1_walk_flat import G1WalkFlat
from sacscale.task.walk_rules import TaskConfig

TRIAL_ENVS = 1  # one env's reset: real observations at the cost of a model load
TRIAL_SEED = 0


def first_observations(model: str | None, tilt_obs: str) -> tuple[torch.Tensor, torch.Tensor]:
    """(actor, critic) observations of one freshly reset env of the task."""
    env = G1WalkFlat(load_model(model), TRIAL_ENVS, 1, TRIAL_SEED, config=TaskConfig(tilt_obs=tilt_obs))
    try:
        actor_obs, critic_obs = env.reset()
    finally:
        env.close()
    return torch.as_tensor(actor_obs, dtype=torch.float32), torch.as_tensor(critic_obs, dtype=torch.float32)


def _normaliser(tensors: dict, field: str) -> tuple[torch.Tensor | None, torch.Tensor | None]:
    """The (shift, scale) the learner uses on `field` (None, None without --obs-norm); they were
    held to the ones its statistics make before (resume_checks.normaliser_problem)."""
    return tensors.get(f"{field}_shift"), tensors.get(f"{field}_scale")


def _load(module: torch.nn.Module, flat: torch.Tensor, name: str) -> str | None:
    params = list(module.parameters())
    want = sum(p.numel() for p in params)
    if flat.dim() != 1 or flat.numel() != want:
        return f"learner_state.{name} holds {flat.numel()} values, the resumed run's network {want}"
    offset = 0
    with torch.no_grad():
        for p in params:
            p.copy_(flat[offset:offset + p.numel()].view_as(p))
            offset += p.numel()
    return None


def _normalised(obs: torch.Tensor, shift, scale) -> torch.Tensor:
    return obs if shift is None else (obs - shift) * scale


@torch.no_grad()
def policy_problem(tensors: dict, sac, observations: tuple[torch.Tensor, torch.Tensor]) -> str | None:
    """Why the learner state `tensors` (final.pt's learner_state, its dtypes and finiteness
    already judged) gives non-finite actions, or critic values, on `observations`, for a
    learner of settings `sac`; or None."""
    actor_obs, critic_obs = observations
    actor = Actor(sac.actor_obs_dim, sac.action_dim, sac.actor_hidden, sac.log_std_min, sac.log_std_max,
                  sac.mean_clip, obs_norm=False)  # the normaliser applied here
    critic = DistributionalCritic.from_config(sac)
    if problem := _load(actor, tensors["actor"], "actor"):
        return problem
    noise = torch.randn(actor_obs.shape[0], sac.action_dim, generator=torch.Generator().manual_seed(TRIAL_SEED))
    actions = actor(_normalised(actor_obs, *_normaliser(tensors, "actor_obs")), noise)[0]
    if not bool(torch.isfinite(actions).all()):
        return "its actor's actions on the task's first observations hold NaN or inf"
    for name in ("critic", "target_critic"):
        if problem := _load(critic, tensors[name], name):
            return problem
        if not all(bool(torch.isfinite(q).all())
                   for q in critic(_normalised(critic_obs, *_normaliser(tensors, "critic_obs")), actions)):
            return f"its {name}'s values on the task's first observations hold NaN or inf"
    return None
