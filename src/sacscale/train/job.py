"""The training job: checks first, then one rank in this process, one spawned process
per rank, or (under torchrun or a cluster) this process as one rank of the job."""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import threading

from sacscale import stopping
from sacscale.collect.shm import clean_stale, unlink_prefix
from sacscale.parallel import launch
from sacscale.parallel.launch import Interrupted
from sacscale.train.config import TrainConfig, TrainingError, compiles_losses
from sacscale.train.out_of_memory import is_out_of_memory, out_of_memory_line
from sacscale.train.preflight import JobPlan, check_job
from sacscale.train.rank import run_rank
from sacscale.train.record import mark_failed, write_meta
from sacscale.train.resume import resume_config

# Longest a stop may take after the first stop signal before the watchdog ends the job.
CLEANUP_GRACE_S = 20.0


class OutOfMemory(TrainingError):
    """The run ran out of memory: one line naming the settings it ran with (a resume's are
    its checkpoint's, known only here, not the command line's defaults)."""


def run_training(cfg: TrainConfig, given: frozenset | None = None) -> None:
    """Validate everything that can be checked before starting, then train. `given`: the
    options the command line gave (a resume refuses one that differs from the run's)."""
    if cfg.resume:
        cfg = resume_config(cfg, given)
    try:
        _run_job(cfg)
    except (TrainingError, RuntimeError, ValueError, MemoryError) as exc:
        if is_out_of_memory(exc):  # settings this machine cannot hold: the allocator's words name none
            raise OutOfMemory(out_of_memory_line(cfg)) from exc
        raise


def _run_job(cfg: TrainConfig) -> None:
    job = check_job(cfg)
    clean_stale()  # blocks of runs SIGKILLed mid-creation (their creators provably gone)
    backend = launch.backend_for(job.devices)
    if cfg.compile and not compiles_losses(cfg):
        print("sacscale train: --allreduce between-graphs: the losses run eagerly (compiled losses in a "
              "segmented graph gave wrong gradients; docs/faults.md)", file=sys.stderr, flush=True)
    prefix = launch.job_prefix()

    previous_handlers = stopping.install(on_first=lambda signum: _arm_cleanup_watchdog(cfg, prefix, signum))
    try:
        if job.external:
            _run_external_rank(cfg, job, backend, prefix)
        else:
            _run_local_ranks(cfg, job, backend, prefix)
    finally:
        stopping.restore(previous_handlers)


def _pool_record(job: JobPlan) -> dict:
    """train_meta.json's `collector_pools`: the pools and the learners' CPUs."""
    return {**job.pools.as_dict(), "learner_affinity": job.learner_cpus}


def _run_external_rank(cfg: TrainConfig, job: JobPlan, backend: str, prefix: str) -> None:
    """This process is one rank of a job started by torchrun or a cluster."""
    rank = int(os.environ["RANK"])
    local_rank = int(os.environ.get("LOCAL_RANK", rank))
    if local_rank >= len(job.devices):
        raise TrainingError(f"LOCAL_RANK={local_rank} but --devices lists {len(job.devices)} device(s) on this host")
    if rank == 0:
        write_meta(cfg, job.world_size, _pool_record(job))
    try:
        launch.init_group(backend, rank, job.world_size, cfg.timeout_s)
        try:
            run_rank(cfg, rank, job.world_size, job.pools.pools[local_rank], prefix, local_rank=local_rank,
                     learner_cpus=job.learner_cpus[local_rank])
        finally:
            launch.destroy_group()
    except BaseException as exc:
        if rank == 0:
            mark_failed(cfg, exc)
        raise


def _run_local_ranks(cfg: TrainConfig, job: JobPlan, backend: str, prefix: str) -> None:
    """Every rank on this host: one in this process, or one spawned process each."""
    write_meta(cfg, job.world_size, _pool_record(job))
    try:
        if job.world_size == 1:
            _run_one_rank(cfg, job, backend, prefix)
        else:
            launch.spawn_and_supervise(
                _rank_main, job.world_size, backend, cfg.timeout_s,
                args_for_rank=lambda r: (cfg, job.pools.pools[r], prefix, job.learner_cpus[r]),
                shm_prefix=prefix,
                describe_rank=lambda r: f"device {job.devices[r]}",
                check_stop=stopping.check,
            )
    except BaseException as exc:
        mark_failed(cfg, exc)
        raise


def _run_one_rank(cfg: TrainConfig, job: JobPlan, backend: str, prefix: str) -> None:
    """The only rank, in this process; a process group of one only for `--grad-sync on`."""
    if cfg.grad_sync == "on":
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(launch.free_port()))
        launch.init_group(backend, 0, 1, cfg.timeout_s)
    try:
        run_rank(cfg, 0, 1, job.pools.pools[0], prefix, local_rank=0, learner_cpus=job.learner_cpus[0])
    finally:
        launch.destroy_group()


def _rank_main(rank: int, world_size: int, cfg: TrainConfig, pool, shm_prefix: str, learner_cpus=None) -> None:
    """Body of a spawned rank (the launcher has set up the process group and SIGTERM)."""
    run_rank(cfg, rank, world_size, pool, shm_prefix, local_rank=rank, learner_cpus=learner_cpus)


def _arm_cleanup_watchdog(cfg: TrainConfig, shm_prefix: str, signum: int) -> None:
    """Armed by the first stop signal (sacscale.stopping): should the stop not complete
    within CLEANUP_GRACE_S (e.g. the signal came during a first compile, which has no
    stop check inside), kill the children, record `interrupted` and exit, so a stop is
    always bounded in time."""

    def expire():
        sys.stderr.write(f"sacscale train: cleanup after {signal.Signals(signum).name} took over "
                         f"{CLEANUP_GRACE_S:.0f} s; killing child processes and exiting\n")
        sys.stderr.flush()
        for child in multiprocessing.active_children():
            child.kill()
        unlink_prefix(shm_prefix)
        try:
            mark_failed(cfg, Interrupted(signum))
        except Exception:  # noqa: BLE001 - the exit must happen whatever the disk says
            pass
        os._exit(128 + signum)

    timer = threading.Timer(CLEANUP_GRACE_S, expire)
    timer.daemon = True
    timer.start()
