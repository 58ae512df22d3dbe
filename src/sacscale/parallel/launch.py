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
import multiprocessing as mp
import os
import secrets
import signal
import socket
import sys
import time
import traceback
from collections.abc import Callable
from multiprocessing.connection import wait as wait_any

import torch.distributed as dist

from sacscale import stopping
from sacscale.collect.shm import unlink_prefix
# both read as launch.<name> by the trainer, the probes and their tests
from sacscale.parallel.topology import backend_for, shares_cuda_device  # noqa: F401
from sacscale.processes import SpawnedChild, describe_exit, die_with_parent, end_all
from sacscale.stopping import Interrupted
from sacscale.usage import escape_what_the_encoding_cannot_hold

KILL_GRACE_S = 10.0


MULTICAST_OFF = {
    "NCCL_NVLS_ENABLE": "0",
    "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
    "NVSHMEM_DISABLE_NVLS": "1",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def job_prefix() -> str:
    """Name prefix of this job's shared-memory blocks (unique per job)."""
    return f"sacscale_{os.getpid()}_{secrets.token_hex(3)}"


# Single-host jobs keep the backends' own sockets on loopback too (gloo would otherwise
# take the address the host name resolves to, NCCL's bootstrap the first non-loopback one).
LOOPBACK_ONLY = {"GLOO_SOCKET_IFNAME": "lo", "NCCL_SOCKET_IFNAME": "lo"}


def listen_socket(addr: str, port: int) -> socket.socket:
    """A listening TCP socket on `addr` (MASTER_ADDR: an address of this host) only."""
    family, kind, proto, _, sockaddr = socket.getaddrinfo(addr, port, type=socket.SOCK_STREAM)[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(sockaddr)
    except OSError as exc:
        sock.close()
        raise RuntimeError(f"rendezvous: cannot listen on MASTER_ADDR={addr} port {port}: {exc}") from exc
    sock.listen(128)
    return sock


def rendezvous_store(rank: int, world_size: int, timeout_s: float):
    """The job's TCPStore, listening on MASTER_ADDR's interface only.

    torch's own env:// store listens on every interface, whatever MASTER_ADDR says; rank 0
    therefore binds the socket itself and hands it to the store. Under torchrun the agent
    hosts the store (TORCHELASTIC_USE_AGENT_STORE): None, the launcher decides."""
    if os.environ.get("TORCHELASTIC_USE_AGENT_STORE", "").lower() == "true":
        return None
    addr = os.environ.get("MASTER_ADDR", "127.0.0.1")
    port = int(os.environ["MASTER_PORT"])
    timeout = datetime.timedelta(seconds=timeout_s)
    if rank == 0:
        fd = listen_socket(addr, port).detach()  # the store owns the descriptor from here on
        return dist.TCPStore(addr, port, world_size, True, timeout, wait_for_workers=False, master_listen_fd=fd)
    return dist.TCPStore(addr, port, world_size, False, timeout)


def init_group(backend: str, rank: int, world_size: int, timeout_s: float) -> None:
    # NVLink multicast off: on shared multi-GPU hosts it can take the GPUs out of service
    for name, value in MULTICAST_OFF.items():
        os.environ.setdefault(name, value)
    timeout = datetime.timedelta(seconds=timeout_s)
    store = rendezvous_store(rank, world_size, timeout_s)
    if store is None:
        dist.init_process_group(backend, init_method="env://", rank=rank, world_size=world_size, timeout=timeout)
    else:
        dist.init_process_group(backend, store=store, rank=rank, world_size=world_size, timeout=timeout)


def destroy_group() -> None:
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


def rank_entry(fn: Callable, rank: int, world_size: int, backend: str, timeout_s: float,
               master_port: int, args: tuple, report=None) -> None:
    """Body of a spawned rank process: process group, the work, clean exit codes. On
    failure the reason is also sent through `report` (a one-way pipe to the supervisor)."""
    escape_what_the_encoding_cannot_hold()  # a spawned process starts with Python's stream settings
    stopping.install()  # SIGTERM/SIGINT/SIGHUP: the rank's loop stops at its next check
    die_with_parent(signal.SIGTERM)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(master_port),
                      RANK=str(rank), WORLD_SIZE=str(world_size), LOCAL_RANK=str(rank))
    for name, value in LOOPBACK_ONLY.items():
        os.environ.setdefault(name, value)
    code = 0
    reason = None
    try:
        init_group(backend, rank, world_size, timeout_s)
        stopping.check()
        fn(rank, world_size, *args)
    except Interrupted as exc:
        code = 128 + exc.signum
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException as exc:  # noqa: BLE001 - report every failure with its rank
        reason = f"{type(exc).__name__}: {exc}"
        sys.stderr.write(f"[rank {rank}] {reason}\n{traceback.format_exc()}")
        sys.stderr.flush()
        code = 1
    finally:
        try:
            destroy_group()
        except Exception:
            pass
    if reason is not None and report is not None:
        try:
            report.send(reason[:4000])
        except Exception:
            pass
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


class RankFailed(RuntimeError):
    pass


# Messages of a rank that failed only because a peer went away or stopped answering.
_PEER_SYMPTOMS = ("connection closed", "connection reset", "broken pipe", "timed out", "timeout",
                  "connection refused", "peer", "interrupted by", "sigterm")


def _root_cause(failed: list[int], codes: dict[int, int], reasons: dict[int, str]) -> int:
    """The rank to blame when several failed in the same instant: one killed by a signal
    first, then one whose error is not a peer's symptom, then the lowest rank."""

    def key(r: int):
        symptom = any(s in (reasons.get(r) or "").lower() for s in _PEER_SYMPTOMS)
        return (codes[r] >= 0, symptom, r)

    return min(failed, key=key)


def spawn_and_supervise(fn: Callable, world_size: int, backend: str, timeout_s: float,
                        args_for_rank: Callable[[int], tuple], shm_prefix: str,
                        describe_rank: Callable[[int], str], check_stop: Callable[[], None] | None = None) -> None:
    """Run `fn(rank, world_size, *args_for_rank(rank))` in one process per rank.

    Returns when all ranks exit 0. When one fails, the others are stopped (SIGTERM, then
    SIGKILL after KILL_GRACE_S) and RankFailed names the rank that failed first, with
    its pid and its error (or the signal that killed it). Ranks die with this process
    (PR_SET_PDEATHSIG), and a stop request (`check_stop()` raises, polled every 0.2 s)
    stops them the same way.
    """
    ctx = mp.get_context("spawn")
    port = free_port()
    pipes = [ctx.Pipe(duplex=False) for _ in range(world_size)]
    # spawned, not started as commands (sacscale.processes.start_group): a rank runs `fn` and
    # stays in our process group, which a stop signal to the job must reach
    procs = [
        ctx.Process(target=rank_entry, name=f"sacscale-rank{r}",
                    args=(fn, r, world_size, backend, timeout_s, port, args_for_rank(r), pipes[r][1]))
        for r in range(world_size)
    ]
    failure = None
    try:
        for p in procs:
            p.start()
        for _, send in pipes:
            send.close()  # only the ranks write; EOF once they are gone
        running = {p.sentinel: r for r, p in enumerate(procs)}
        while running:
            ready = wait_any(list(running), timeout=0.2)
            if check_stop is not None:
                check_stop()
            if not ready:
                continue
            time.sleep(0.05)  # ranks that fail together (a peer's error follows at once) are judged together
            for sentinel in wait_any(list(running), timeout=0):
                procs[running.pop(sentinel)].join()
            codes = {r: p.exitcode for r, p in enumerate(procs) if p.exitcode not in (None, 0)}
            if codes:
                reasons = {r: _read_reason(pipes[r][0]) for r in codes}
                root = _root_cause(sorted(codes), codes, reasons)
                failure = [_describe_failure(r, procs[r].pid, codes[r], reasons.get(r), describe_rank)
                           for r in [root, *(r for r in sorted(codes) if r != root)]]
                break
    finally:
        killed, frozen = _stop_all(procs)
        _unlink_untracked(shm_prefix)
        for recv, _ in pipes:
            recv.close()
    if failure:
        # A rank found stopped (SIGSTOP, a debugger) is why its peers timed out: name it first.
        parts = [f"rank {r} ({describe_rank(r)}, pid {procs[r].pid}) was frozen (process state stopped) "
                 "and answered no collective; killed it" for r in frozen]
        parts += [failure[0] if i == 0 and not frozen else f"then {f}" for i, f in enumerate(failure)]
        slow = [r for r in killed if r not in frozen]
        if slow:
            parts.append(", ".join(f"rank {r}" for r in slow)
                         + f" did not stop within {KILL_GRACE_S:.0f} s of SIGTERM and was killed")
        raise RankFailed("; ".join(parts) + "; stopped the other rank(s)")


def _unlink_untracked(shm_prefix: str) -> None:
    """Unlink the blocks of a rank killed in the microseconds between creating and
    unlinking one (sacscale.collect.shm); otherwise there is nothing to find."""
    unlink_prefix(shm_prefix)


def _read_reason(conn) -> str | None:
    try:
        return conn.recv() if conn.poll() else None
    except (EOFError, OSError):
        return None


def _describe_failure(rank: int, pid: int, code: int, reason: str | None, describe_rank) -> str:
    what = f"rank {rank} ({describe_rank(rank)}, pid {pid})"
    if code < 0 or not reason:
        return f"{what} {describe_exit(code)}"
    return f"{what} failed: {reason}"


def _stop_all(procs) -> tuple[list[int], list[int]]:
    """SIGTERM every live rank; SIGKILL those still alive after KILL_GRACE_S, and at once
    those found stopped (they cannot act on SIGTERM). Returns (killed, of which frozen)."""
    started = [r for r, p in enumerate(procs) if p.pid is not None]
    endings = end_all([SpawnedChild(procs[r]) for r in started], signal.SIGTERM, KILL_GRACE_S,
                      kill_frozen=True, reap_s=KILL_GRACE_S)
    killed = [r for r, ending in zip(started, endings) if ending.killed]
    frozen = [r for r, ending in zip(started, endings) if ending.frozen]
    return killed, frozen
