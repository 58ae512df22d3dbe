"""One first update (compile, warm-up, CUDA-graph capture) at a time per GPU.

Two trainers that shared one GPU and compiled at once with a cold compile cache both
died with a device-side assert; with a warm cache the same pair ran (docs/faults.md,
"two trainers on one GPU"). The cause was not isolated, so the situation is made
impossible instead: a trainer holds an exclusive lock on a per-GPU file while its first
update runs. A second trainer on the same GPU waits (a bounded time), then finds the
cache warm. Ranks of one job use different GPUs, so they never wait for each other
(their warm-ups all-reduce, a shared lock would deadlock them). The kernel drops the
lock when its holder exits, however it exits.

The lock files live in a folder of this user's own (mode 0700, checked for its owner
and that it is no link): a folder every user may write, such as /tmp itself, would let
another user plant a link where the lock file goes, or hold the lock forever. So the
lock serialises the trainers of one user; another user's trainers on the same GPU are
not seen (docs/faults.md says so). The lock is sacscale.locks.private_lock, which the
pipeline's machine-wide training lock shares (that module says why not `filelock`).
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Callable

from sacscale.locks import private_lock

# A cold first update takes 7-40 s on one H200; a wait far past that means the holder is
# stuck (or a debugger holds it), and the trainer should say so rather than wait for ever.
FIRST_UPDATE_WAIT_S = 1800.0


def gpu_key(device) -> str:
    """A name for the physical GPU behind `device`, the same in every process that sees
    it (its UUID; CUDA_VISIBLE_DEVICES renumbers indices, so an index is the fallback)."""
    import torch  # here, not at the top: only a CUDA trainer asks, and torch is heavy to import

    index = device.index if device.index is not None else torch.cuda.current_device()
    props = torch.cuda.get_device_properties(index)
    uuid = str(getattr(props, "uuid", "") or "")
    if uuid:
        return "gpu-" + re.sub(r"[^A-Za-z0-9-]", "", uuid)
    visible = re.sub(r"[^0-9A-Za-z-]", "_", os.environ.get("CUDA_VISIBLE_DEVICES", "all"))
    return f"gpu-visible{visible}-index{index}"


def exclusive(key: str, check_stop: Callable[[], None] | None = None,
              say: Callable[[str], None] | None = None, wait_s: float = FIRST_UPDATE_WAIT_S):
    """The first-update lock of GPU `key`: `<lock_dir>/sacscale-first-update-<key>.lock`."""
    key = re.sub(r"[^A-Za-z0-9_.-]", "_", key)  # a file name, whatever the device calls itself
    return private_lock(f"sacscale-first-update-{key}.lock", "the first-update lock of this GPU", wait_s,
                        check_stop, say)


def first_update_lock(device, check_stop: Callable[[], None] | None = None):
    """`exclusive` for a CUDA device's first update; a no-op context on CPU."""
    if getattr(device, "type", str(device)) != "cuda":
        return contextlib.nullcontext(0.0)
    return exclusive(gpu_key(device), check_stop, say=lambda msg: print(f"sacscale: {msg}", file=sys.stderr,
                                                                           flush=True))

