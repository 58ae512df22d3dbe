"""Parameters in one flat buffer per group, so that an optimizer step, a Polyak update, a
gradient all-reduce and publishing the actor are each one operation on one tensor."""

from __future__ import annotations

import torch


class FlatParams:
    """Re-home `params` into one flat float32 buffer (`data`); optionally give them one
    flat gradient bucket (`grad`). Each parameter's `.data` (and `.grad`) becomes a view
    of the flat tensor, so in-place updates of the flat tensor are seen by the modules
    and backward accumulates straight into the bucket. Move modules to their device
    BEFORE flattening (`.to()` would replace the views)."""

    def __init__(self, params, with_grad: bool) -> None:
        self.params = list(params)
        if not self.params:
            raise ValueError("no parameters to flatten")
        device = self.params[0].device
        if any(p.dtype != torch.float32 or p.device != device for p in self.params):
            raise ValueError("flat parameters must be float32 on one device")
        total = sum(p.numel() for p in self.params)
        self.data = torch.empty(total, dtype=torch.float32, device=device)
        self.grad = torch.zeros(total, dtype=torch.float32, device=device) if with_grad else None
        offset = 0
        with torch.no_grad():
            for p in self.params:
                n = p.numel()
                self.data[offset:offset + n].copy_(p.reshape(-1))
                p.data = self.data[offset:offset + n].view_as(p)
                if with_grad:
                    p.grad = self.grad[offset:offset + n].view_as(p)
                offset += n
        if with_grad:
            self.data.grad = self.grad  # the optimizer steps the flat tensor itself

    def views_intact(self) -> bool:
        """True while every parameter's data (and grad) still views the flat tensors."""
        def inside(t, flat):
            if t is None or flat is None:
                return t is None and flat is None
            start = flat.data_ptr()
            end = start + flat.numel() * flat.element_size()
            return start <= t.data_ptr() < end
        return all(inside(p.data, self.data) and inside(p.grad, self.grad) for p in self.params)


def polyak_(target: torch.Tensor, online: torch.Tensor, tau: float) -> None:
    """target <- (1 - tau) target + tau online, in place."""
    target.lerp_(online, tau)
