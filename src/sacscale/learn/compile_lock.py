"""One first update (compile, warm-up, CUDA-graph capture) at a time per GPU.

Two trainers that shared one GPU and compiled at once with a cold compile cache both
died with a device-side assert; with a warm cache the same pair ran (docs/faults.md,
"two trainers on one GPU"). The cause was not isolated, so the situation is made
impossible instead: a trainer holds an exclusive lock on a per-GPU file while its first
update runs. A second trainer on the same GPU waits, then finds the cache warm. Ranks of
one job use different GPUs, so they never wait for each other (their warm-ups
all-reduce, a shared lock would deadlock them). The kernel drops the lock when its
holder exits, however it exits.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

POLL_S = 0.2


def lock_dir() -> Path:
    """Where the lock files live: SACSCALE_LOCK_DIR, else the system's temporary folder
    (one per host, so trainers of different users and projects see each other)."""
    return Path(os.environ.get("SACSCALE_LOCK_DIR") or tempfile.gettempdir())


def gpu_key(device) -> str:
    """A name for the physical GPU behind `device`, the same in every process that sees
    it (its UUID; CUDA_VISIBLE_DEVICES renumbers indices, so an index is the fallback)."""
    import torch

    index = device.index if device.index is not None else torch.cuda.current_device()
    props = torch.cuda.get_device_properties(index)
    uuid = str(getattr(props, "uuid", "") or "")
    if uuid:
        return "gpu-" + re.sub(r"[^A-Za-z0-9-]", "", uuid)
    return f"gpu-visible{os.environ.get('CUDA_VISIBLE_DEVICES', 'all').replace(',', '_')}-index{index}"


@contextlib.contextmanager
def exclusive(key: str, check_stop: Callable[[], None] | None = None,
              say: Callable[[str], None] | None = None) -> Iterator[float]:
    """Hold the lock file `<lock_dir>/sacscale-first-update-<key>.lock`; yields the
    seconds spent waiting for it. While waiting, `check_stop()` runs every POLL_S (a stop
    signal then ends the wait) and `say` is told once whom we wait for."""
    path = lock_dir() / f"sacscale-first-update-{key}.lock"
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        with contextlib.suppress(OSError):
            os.fchmod(fd, 0o666)  # other users' trainers share the GPU too
        writable = True
    except PermissionError:  # another user's file, not shared for writing: a lock still
        fd, writable = os.open(path, os.O_RDONLY), False
    t0 = time.monotonic()
    try:
        told = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if not told and say is not None:
                    holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "another process"
                    say(f"waiting for {holder} to finish its first update on this GPU ({path})")
                    told = True
                if check_stop is not None:
                    check_stop()
                time.sleep(POLL_S)
        if writable:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"pid {os.getpid()}".encode(), 0)
        yield time.monotonic() - t0
    finally:
        os.close(fd)  # releases the lock


def first_update_lock(device, check_stop: Callable[[], None] | None = None):
    """`exclusive` for a CUDA device's first update; a no-op context on CPU."""
    if getattr(device, "type", str(device)) != "cuda":
        return contextlib.nullcontext(0.0)
    return exclusive(gpu_key(device), check_stop, say=lambda msg: print(f"sacscale: {msg}", file=sys.stderr,
                                                                           flush=True))
