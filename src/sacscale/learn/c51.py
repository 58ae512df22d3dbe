"""Categorical (C51) distributional helpers on a fixed, evenly spaced support."""

from __future__ import annotations

import torch


def make_support(v_min: float, v_max: float, num_atoms: int, device=None) -> torch.Tensor:
    """The fixed atoms z_0..z_{K-1}, float32."""
    return torch.linspace(v_min, v_max, num_atoms, device=device, dtype=torch.float32)


def project(
    next_probs: torch.Tensor,
    reward: torch.Tensor,
    discount: torch.Tensor,
    v_min: float,
    v_max: float,
    return_invalid: bool = False,
):
    """Project the distribution of `reward + discount * Z` back onto the support.

    next_probs: (B, K) probabilities over the support linspace(v_min, v_max, K).
    reward, discount: (B,); `discount` is gamma * (1 - terminated) (0 for terminal rows,
    which puts all mass at the clamped reward).
    Returns (B, K) float32 probabilities; with `return_invalid`, also the (B,) bool mask
    of the rows that were not finite.

    Each shifted atom tz_j = clamp(r + d z_j) sits at fractional position
    b_j = (tz_j - v_min) / dz; its mass p_j is split between atoms floor(b_j) and
    floor(b_j) + 1 in proportion to closeness. Writing the upper index as lower + 1
    (clamped to the last atom) with weight b_j - lower means that a b_j landing exactly
    on an atom gives all its mass to that atom (the classic floor/ceil form loses it).

    A row whose reward, discount or probabilities are not all finite gets no mass at
    all (an all-zero target: its cross-entropy and gradient are 0). NaN survives
    clamp() and floor(), and NaN cast to int64 is an index far out of range (a
    device-side assert on CUDA), so such rows are replaced by zeros before any index is
    made, and the indices are clamped as well: no input can index out of bounds.
    """
    probs = next_probs.float()
    reward, discount = reward.float(), discount.float()
    num_atoms = probs.shape[-1]
    invalid = ~(torch.isfinite(reward) & torch.isfinite(discount) & torch.isfinite(probs).all(-1))
    # torch.where, not a product: NaN * 0 is NaN
    reward = torch.where(invalid, 0.0, reward)
    discount = torch.where(invalid, 0.0, discount)
    probs = torch.where(invalid.unsqueeze(-1), 0.0, probs)
    delta = (v_max - v_min) / (num_atoms - 1)
    support = torch.linspace(v_min, v_max, num_atoms, device=probs.device, dtype=torch.float32)
    tz = reward.unsqueeze(-1) + discount.unsqueeze(-1) * support  # finite or +-inf (overflow): never NaN
    b = (tz.clamp(v_min, v_max) - v_min) / delta
    b = b.clamp(0.0, num_atoms - 1)  # guard float round-off at the ends
    lower = b.floor()
    upper_weight = b - lower
    lower_idx = lower.long().clamp(0, num_atoms - 1)
    upper_idx = (lower_idx + 1).clamp(max=num_atoms - 1)
    out = torch.zeros_like(probs)
    out.scatter_add_(-1, lower_idx, probs * (1.0 - upper_weight))
    out.scatter_add_(-1, upper_idx, probs * upper_weight)
    return (out, invalid) if return_invalid else out


def expected_value(logits: torch.Tensor, support: torch.Tensor) -> torch.Tensor:
    """Mean of the categorical distribution given by `logits` (B, K) -> (B,), float32."""
    return (torch.softmax(logits.float(), dim=-1) * support).sum(-1)


def cross_entropy(logits: torch.Tensor, target_probs: torch.Tensor) -> torch.Tensor:
    """Per-row cross-entropy -sum_k target_k log softmax(logits)_k -> (B,), float32."""
    return -(target_probs * torch.log_softmax(logits.float(), dim=-1)).sum(-1)


__all__ = ["make_support", "project", "expected_value", "cross_entropy"]
