"""Actor (tanh-squashed Gaussian) and twin distributional (C51) critic.

The actor takes its standard-normal noise as an argument, so every random draw of a
learner iteration can be made in one place (and replaced by the caller's numbers).
The same `Actor` runs on CPU in the collector, fed with weights published as one flat
float32 vector (`flat_parameters` / `load_flat`): its parameters in `parameters()` order,
then, with observation normalisation on, the normaliser's shift and scale, so the
collector's CPU actor always acts on exactly the learner's input transform.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from sacscale.learn.config import SACConfig

_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
_LOG_2 = math.log(2.0)


def mlp_trunk(in_dim: int, hidden: tuple[int, ...]) -> nn.Sequential:
    """Hidden layers Linear -> LayerNorm -> SiLU."""
    layers: list[nn.Module] = []
    for width in hidden:
        layers += [nn.Linear(in_dim, width), nn.LayerNorm(width), nn.SiLU()]
        in_dim = width
    return nn.Sequential(*layers)


class ObsNormalizer(nn.Module):
    """x -> (x - shift) * scale, elementwise; shift and scale are buffers (not trained)
    that the learner sets from its running statistics (identity until then)."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.register_buffer("shift", torch.zeros(dim))
        self.register_buffer("scale", torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return (x - self.shift) * self.scale


class Actor(nn.Module):
    def __init__(
        self,
        obs_dim: int = 98,
        action_dim: int = 29,
        hidden: tuple[int, ...] = (512, 256, 128),
        log_std_min: float = -5.0,
        log_std_max: float = 0.0,
        mean_clip: float = 10.0,
        obs_norm: bool = False,
    ) -> None:
        super().__init__()
        self.obs_dim, self.action_dim = obs_dim, action_dim
        self.obs_norm = ObsNormalizer(obs_dim) if obs_norm else None
        self.log_std_min, self.log_std_max, self.mean_clip = log_std_min, log_std_max, mean_clip
        self.trunk = mlp_trunk(obs_dim, tuple(hidden))
        self.mean_head = nn.Linear(hidden[-1], action_dim)
        self.log_std_head = nn.Linear(hidden[-1], action_dim)
        for head in (self.mean_head, self.log_std_head):
            nn.init.zeros_(head.weight)
            nn.init.zeros_(head.bias)

    @classmethod
    def from_config(cls, cfg: SACConfig) -> "Actor":
        return cls(cfg.actor_obs_dim, cfg.action_dim, cfg.actor_hidden,
                   cfg.log_std_min, cfg.log_std_max, cfg.mean_clip, cfg.obs_norm)

    def mean_and_log_std(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if self.obs_norm is not None:
            obs = self.obs_norm(obs)
        h = self.trunk(obs)
        mean = self.mean_head(h).clamp(-self.mean_clip, self.mean_clip)
        squashed = torch.tanh(self.log_std_head(h))  # in [-1, 1] -> [log_std_min, log_std_max]
        log_std = self.log_std_min + 0.5 * (self.log_std_max - self.log_std_min) * (squashed + 1.0)
        return mean, log_std

    def forward(self, obs: torch.Tensor, noise: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Reparameterised sample with the given standard-normal `noise` (B, A).

        Returns (action in (-1, 1), log-probability (B,) float32).
        """
        mean, log_std = self.mean_and_log_std(obs)
        mean, log_std, noise = mean.float(), log_std.float(), noise.float()
        pre_tanh = mean + log_std.exp() * noise
        action = torch.tanh(pre_tanh)
        gaussian_logp = -0.5 * noise.square() - log_std - _HALF_LOG_2PI
        # log |d tanh(u)/du| = log(1 - tanh(u)^2) = 2 (log 2 - u - softplus(-2u)), stable for large |u|
        log_det = 2.0 * (_LOG_2 - pre_tanh - F.softplus(-2.0 * pre_tanh))
        return action, (gaussian_logp - log_det).sum(-1)

    @torch.no_grad()
    def act(self, obs: torch.Tensor, noise: torch.Tensor | None = None,
            deterministic: bool = False) -> torch.Tensor:
        """Actions for the collector. Draws its own noise unless given or deterministic."""
        if deterministic:
            mean, _ = self.mean_and_log_std(obs)
            return torch.tanh(mean)
        if noise is None:
            noise = torch.randn(obs.shape[0], self.action_dim, device=obs.device, dtype=obs.dtype)
        return self(obs, noise)[0]

    # --- weight publishing: one flat float32 vector, parameters() then the normaliser ---
    def published_tensors(self) -> list[torch.Tensor]:
        """What defines the policy, in publishing order: the parameters, then (with
        observation normalisation) the normaliser's shift and scale."""
        extra = [self.obs_norm.shift, self.obs_norm.scale] if self.obs_norm is not None else []
        return [*self.parameters(), *extra]

    def flat_numel(self) -> int:
        return sum(t.numel() for t in self.published_tensors())

    def flat_parameters(self) -> torch.Tensor:
        return torch.cat([t.detach().reshape(-1).float() for t in self.published_tensors()])

    @torch.no_grad()
    def load_flat(self, flat: torch.Tensor) -> None:
        """Copy a flat vector (any device; float) into the published tensors, in place."""
        flat = flat.reshape(-1)
        if flat.numel() != self.flat_numel():
            raise ValueError(f"flat actor vector has {flat.numel()} values, expected {self.flat_numel()}")
        offset = 0
        for p in self.published_tensors():
            n = p.numel()
            p.copy_(flat[offset:offset + n].view_as(p))
            offset += n


def load_actor_flat(actor: Actor, flat: torch.Tensor) -> None:
    """Load published learner weights (`FastSACLearner.actor_flat()`) into a CPU actor."""
    actor.load_flat(flat)


class DistributionalCritic(nn.Module):
    """Two independent C51 Q-networks over (critic_obs, action); returns both logit sets."""

    def __init__(
        self,
        obs_dim: int = 101,
        action_dim: int = 29,
        hidden: tuple[int, ...] = (768, 384, 192),
        num_atoms: int = 101,
    ) -> None:
        super().__init__()
        in_dim = obs_dim + action_dim
        self.q1 = nn.Sequential(mlp_trunk(in_dim, tuple(hidden)), nn.Linear(hidden[-1], num_atoms))
        self.q2 = nn.Sequential(mlp_trunk(in_dim, tuple(hidden)), nn.Linear(hidden[-1], num_atoms))

    @classmethod
    def from_config(cls, cfg: SACConfig) -> "DistributionalCritic":
        return cls(cfg.critic_obs_dim, cfg.action_dim, cfg.critic_hidden, cfg.num_atoms)

    def forward(self, obs: torch.Tensor, action: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = torch.cat([obs, action.to(obs.dtype)], dim=-1)
        return self.q1(x), self.q2(x)


__all__ = ["Actor", "DistributionalCritic", "ObsNormalizer", "load_actor_flat", "mlp_trunk"]
