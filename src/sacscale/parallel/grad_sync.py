"""Gradient synchronisation plugged into the learner through its graph hooks.

The learner keeps each optimizer's gradients in one persistent flat bucket and calls
every hook on it right after backward, before the optimizer step. On CUDA that call is
inside the captured whole-iteration graph, so the NCCL all-reduce is captured too and
replays with the graph; with gloo (CPU) the same hook runs eagerly.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.distributed as dist


def allreduce_hooks(world_size: int) -> list[Callable[[str, torch.Tensor], None]]:
    """One hook that averages a flat gradient bucket over all ranks, in place.

    SUM then scale (not ReduceOp.AVG): gloo has no AVG, and the two are the same math.
    """
    scale = 1.0 / world_size

    def average(name: str, flat_grad: torch.Tensor) -> None:
        dist.all_reduce(flat_grad, op=dist.ReduceOp.SUM)
        if world_size > 1:
            flat_grad.mul_(scale)

    return [average]


@torch.no_grad()
def broadcast_state(tensors: dict[str, torch.Tensor], src: int = 0) -> None:
    """Make every rank start from rank `src`'s parameters and buffers.

    Also the first collectives on the communicator: NCCL is warmed up eagerly here,
    long before the learner captures its graph.
    """
    for name in sorted(tensors):
        dist.broadcast(tensors[name], src=src)
