"""Start the ranks of a training job and watch them.

* One device: the rank runs in this process (a world-size-1 process group is made only
  when gradient-sync hooks are asked for, e.g. to measure their cost).
* Several devices on this host: one spawned process per device, rendezvous on a free
  local port, supervised: when a rank exits non-zero the others are stopped and the
  job fails naming the rank, within a bounded time (never a hang on a dead peer).
* Launched by torchrun or a cluster (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT set):
  this process is one rank, `--devices` lists this host's devices by LOCAL_RANK, and the
  external launcher does the supervising.
"""

from __future__ import annotations

import datetime
import os
import secrets
import signal
import socket
import sys
import time
import traceback
from collections.abc import Callable

from sacscale.collect.shm import unlink_prefix

KILL_GRACE_S = 10.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def job_prefix() -> str:
    """Name prefix of this job's shared-memory blocks (unique per job)."""
    return f"sacscale_{os.getpid()}_{secrets.token_hex(3)}"


def init_group(backend: str, rank: int, world_size: int, timeout_s: float) -> None:
    import torch.distributed as dist

    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")  # NVLink multicast off on shared machines
    dist.init_process_group(
        backend, init_method="env://", rank=rank, world_size=world_size,
        timeout=datetime.timedelta(seconds=timeout_s),
    )


def destroy_group() -> None:
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


def _raise_on_sigterm() -> None:
    """Turn SIGTERM into SystemExit so `finally` blocks stop collectors and free shm."""

    def handler(signum, frame):
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, handler)


def rank_entry(fn: Callable, rank: int, world_size: int, backend: str, timeout_s: float,
               master_port: int, args: tuple) -> None:
    """Body of a spawned rank process: process group, the work, clean exit codes."""
    _raise_on_sigterm()
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(master_port),
                      RANK=str(rank), WORLD_SIZE=str(world_size), LOCAL_RANK=str(rank))
    code = 0
    try:
        init_group(backend, rank, world_size, timeout_s)
        fn(rank, world_size, *args)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException as exc:  # noqa: BLE001 - report every failure with its rank
        sys.stderr.write(f"[rank {rank}] {type(exc).__name__}: {exc}\n{traceback.format_exc()}")
        sys.stderr.flush()
        code = 1
    finally:
        try:
            destroy_group()
        except Exception:
            pass
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


class RankFailed(RuntimeError):
    pass


def spawn_and_supervise(fn: Callable, world_size: int, backend: str, timeout_s: float,
                        args_for_rank: Callable[[int], tuple], shm_prefix: str,
                        describe_rank: Callable[[int], str]) -> None:
    """Run `fn(rank, world_size, *args_for_rank(rank))` in one process per rank.

    Returns when all ranks exit 0; raises RankFailed naming the first rank that failed
    (the others are stopped: SIGTERM, then SIGKILL after a grace period).
    """
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    port = free_port()
    procs = [
        ctx.Process(target=rank_entry, name=f"sacscale-rank{r}",
                    args=(fn, r, world_size, backend, timeout_s, port, args_for_rank(r)))
        for r in range(world_size)
    ]
    failure = None
    try:
        for p in procs:
            p.start()
        while True:
            codes = [p.exitcode for p in procs]
            bad = [(r, c) for r, c in enumerate(codes) if c not in (None, 0)]
            if bad:
                rank, code = bad[0]
                how = f"signal {-code}" if code < 0 else f"exit code {code}"
                failure = f"rank {rank} ({describe_rank(rank)}) died with {how}; stopped the other rank(s)"
                break
            if all(c == 0 for c in codes):
                return
            time.sleep(0.2)
    except KeyboardInterrupt:
        failure = "interrupted"
        raise
    finally:
        _stop_all(procs)
        unlink_prefix(shm_prefix)
        if failure and failure != "interrupted":
            raise RankFailed(failure)


def _stop_all(procs) -> None:
    for p in procs:
        if p.exitcode is None and p.pid is not None:
            p.terminate()
    deadline = time.monotonic() + KILL_GRACE_S
    for p in procs:
        if p.pid is not None:
            p.join(max(0.0, deadline - time.monotonic()))
    for p in procs:
        if p.exitcode is None and p.pid is not None:
            p.kill()
            p.join(KILL_GRACE_S)
