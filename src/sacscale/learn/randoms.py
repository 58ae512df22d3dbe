"""The random numbers of one learner iteration, drawn as one struct so that a reference
learner (or another rank) can be given exactly the same ones."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from sacscale.learn.config import SACConfig


@dataclass
class Randoms:
    """Every random number of one iteration (U critic updates, P actor updates, batch B)."""

    indices: torch.Tensor        # (U, B) int64 replay rows of each critic update's batch
    target_noise: torch.Tensor   # (U, B, A) standard normal: a' ~ pi(.|s') in the critic target
    actor_noise: torch.Tensor    # (P, B, A) standard normal: a ~ pi(.|s) in the actor updates

    @classmethod
    def empty(cls, cfg: SACConfig, device, batch_size: int | None = None) -> "Randoms":
        b = cfg.batch_size if batch_size is None else batch_size
        u, p, a = cfg.critic_updates, cfg.actor_updates, cfg.action_dim
        return cls(
            indices=torch.zeros(u, b, dtype=torch.int64, device=device),
            target_noise=torch.zeros(u, b, a, dtype=torch.float32, device=device),
            actor_noise=torch.zeros(p, b, a, dtype=torch.float32, device=device),
        )

    def tensors(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return self.indices, self.target_noise, self.actor_noise

    def copy_(self, other: "Randoms") -> "Randoms":
        for dst, src in zip(self.tensors(), other.tensors()):
            dst.copy_(src)
        return self

    def clone(self) -> "Randoms":
        return Randoms(*(t.clone() for t in self.tensors()))

    def to(self, device) -> "Randoms":
        return Randoms(*(t.to(device) for t in self.tensors()))

    @classmethod
    def concat(cls, parts: list["Randoms"]) -> "Randoms":
        """Join along the batch dimension: rank r's batch is block r of the result."""
        return cls(*(torch.cat(ts, dim=1) for ts in zip(*(p.tensors() for p in parts))))

    def chunk(self, n: int) -> list["Randoms"]:
        """Split along the batch dimension into n equal parts (inverse of concat)."""
        return [Randoms(*ts) for ts in zip(*(t.chunk(n, dim=1) for t in self.tensors()))]
