"""Running mean and variance of observations, as device tensors updated without host syncs.

The learner merges each iteration's new replay rows into the statistics with the parallel
(pairwise) update of Chan, Golub and LeVeque: for a batch of n_b rows with mean m_b and
variance v_b merged into n rows with mean m and variance v,

    N = n + n_b,   d = m_b - m,   m' = m + d n_b / N,   v' = (v n + v_b n_b + d^2 n n_b / N) / N

which is exact (equal to the statistics of all rows at once) up to rounding. `weight` lets
a captured CUDA graph merge "zero rows" (a no-op) when no new rows are pending, so the
graph can replay every iteration without a host branch.
"""

from __future__ import annotations

import torch


class RunningMeanVar:
    def __init__(self, dim: int, device: torch.device | str) -> None:
        self.count = torch.zeros((), dtype=torch.float64, device=device)  # rows merged so far
        self.mean = torch.zeros(dim, dtype=torch.float32, device=device)
        self.var = torch.ones(dim, dtype=torch.float32, device=device)    # 1 until the first rows

    @torch.no_grad()
    def merge_(self, batch_mean: torch.Tensor, batch_var: torch.Tensor, rows: torch.Tensor) -> None:
        """Merge `rows` (a 0-d tensor, may be 0) rows with the given mean and variance, in place."""
        total = self.count + rows
        safe = total.clamp(min=1.0)
        w_new = (rows / safe).float()               # n_b / N
        w_cross = (self.count * rows / safe / safe).float()  # n n_b / N^2
        w_old = (self.count / safe).float()         # n / N
        delta = batch_mean - self.mean
        var = self.var * w_old + batch_var * w_new + delta.square() * w_cross
        self.mean.add_(delta * w_new)
        # nothing merged yet (N = 0): keep the initial variance of 1
        self.var.copy_(torch.where(total > 0, var, self.var))
        self.count.copy_(total)

    def scale(self, eps: float) -> torch.Tensor:
        """1 / (std + eps): the normaliser's multiplier."""
        return 1.0 / (self.var.clamp(min=0.0).sqrt() + eps)

    def tensors(self, prefix: str) -> dict[str, torch.Tensor]:
        return {f"{prefix}_count": self.count, f"{prefix}_mean": self.mean, f"{prefix}_var": self.var}


__all__ = ["RunningMeanVar"]
