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


def _normalisers(tensors: dict, field: str, eps: float) -> list[tuple[str, torch.Tensor, torch.Tensor]]:
    """The (shift, scale) pairs the learner uses on `field`: the saved ones, and the ones its
    next merge sets from the saved statistics (mean, 1 / (std + eps)); none without --obs-norm."""
    if f"{field}_shift" not in tensors:
        return [("", None, None)]
    derived = 1.0 / (tensors[f"{field}_var"].clamp(min=0.0).sqrt() + eps)
    return [("", tensors[f"{field}_shift"], tensors[f"{field}_scale"]),
            (f" with the normaliser its statistics make ({field}_mean, {field}_var)", tensors[f"{field}_mean"],
             derived)]


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
                  sac.mean_clip, obs_norm=False)  # the normaliser applied here, each of its forms
    critic = DistributionalCritic.from_config(sac)
    if problem := _load(actor, tensors["actor"], "actor"):
        return problem
    noise = torch.randn(actor_obs.shape[0], sac.action_dim, generator=torch.Generator().manual_seed(TRIAL_SEED))
    actions = None
    for how, shift, scale in _normalisers(tensors, "actor_obs", sac.obs_norm_eps):
        actions = actor(_normalised(actor_obs, shift, scale), noise)[0]
        if not bool(torch.isfinite(actions).all()):
            return f"its actor's actions on the task's first observations{how} hold NaN or inf"
    for name in ("critic", "target_critic"):
        if problem := _load(critic, tensors[name], name):
            return problem
        for how, shift, scale in _normalisers(tensors, "critic_obs", sac.obs_norm_eps):
            if not all(bool(torch.isfinite(q).all()) for q in critic(_normalised(critic_obs, shift, scale), actions)):
                return f"its {name}'s values on the task's first observations{how} hold NaN or inf"
    return None
