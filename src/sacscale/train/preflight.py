"""The checks a training job passes before anything is written or started: the options,
the learner settings, the devices, the CPU pools, the log directory, disk and shared
memory, the model. Each failure is a TrainingError that names the flag."""

from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from sacscale import checks
from sacscale.parallel.pools import PoolError, PoolPlan, resolve_learner_cpus, resolve_pools
from sacscale.train.config import ResumeRefused, TrainConfig, TrainingError, sac_config
from sacscale.train.open_run_folder import refuse_open_run_folder


@dataclass
class JobPlan:
    """What the checks found: this host's devices, the job's ranks and their CPUs."""

    devices: list[str]
    world_size: int           # every node's ranks
    external: bool            # launched by torchrun or a cluster (RANK and WORLD_SIZE set)
    pools: PoolPlan           # the collectors' CPU pools, one per rank of this host
    learner_cpus: list[list[int] | None]  # per rank of this host: the learner's CPUs (None: its affinity kept)


def _launcher_number(name: str, low: int, high: int) -> int:
    text = os.environ.get(name, "")
    if not re.fullmatch(r"[0-9]{1,10}", text) or not low <= int(text) <= high:
        raise TrainingError(f"{name}={text[:40]!r} in the environment (an external launcher's, read when RANK and "
                            f"WORLD_SIZE are both set): must be a whole number in [{low}, {high}]")
    return int(text)


def launcher_env() -> tuple[bool, int]:
    """(external, world size): whether RANK and WORLD_SIZE say an external launcher (torchrun,
    a cluster) started this process, each of its variables checked, naming it (`invalid
    literal for int()` named none, after train_meta.json was written)."""
    if not ("RANK" in os.environ and "WORLD_SIZE" in os.environ):
        return False, 0
    world_size = _launcher_number("WORLD_SIZE", 1, 1 << 20)
    _launcher_number("RANK", 0, world_size - 1)
    if "LOCAL_RANK" in os.environ:
        _launcher_number("LOCAL_RANK", 0, world_size - 1)
    if os.environ.get("TORCHELASTIC_USE_AGENT_STORE", "").lower() != "true":  # else the agent's store
        _launcher_number("MASTER_PORT", 1, 65535)
    return True, world_size


def check_job(cfg: TrainConfig) -> JobPlan:
    """Every check that can run before the job starts; the model's last (it imports MuJoCo
    and builds a 2-env task)."""
    cfg.validate()
    sac = sac_config(cfg)  # --extra: unknown or invalid learner settings fail here, before any process starts
    checks.check_sizes(cfg, sac)
    devices = cfg.device_list()
    check_devices(devices)
    memory = checks.replay_memory_problem(sac.replay_capacity(cfg.num_envs), devices.count("cpu"))
    if memory:
        raise TrainingError(f"--num-envs {cfg.num_envs} x --replay-per-env {sac.replay_per_env}: {memory}")
    external, world_size = launcher_env()
    world_size = world_size if external else len(devices)
    try:
        pools = resolve_pools(cfg.collector_cpu_ids, len(devices))
        learner_cpus = resolve_learner_cpus(cfg.learner_cpu_ids, pools.pools)
    except PoolError as exc:
        raise TrainingError(str(exc)) from exc
    log_dir = Path(cfg.log_dir)
    if not external or int(os.environ["RANK"]) == 0:
        # under an external launcher the other ranks share rank 0's directory, which rank 0
        # may already have claimed (train_meta.json): only rank 0 checks it is unused
        _check_run_folder(cfg, log_dir)
    checks.check_writable(log_dir)
    check_disk(log_dir, cfg.min_free_mb)
    checks.check_shared_memory(cfg.num_envs, len(devices), sac)
    checks.check_model(cfg.model)
    return JobPlan(devices, world_size, external, pools, learner_cpus)


def _check_run_folder(cfg: TrainConfig, log_dir: Path) -> None:
    """A new run's --log-dir that is used is the machine's state (exit 1); a --resume folder
    that is no run folder of the user's is bad input (ResumeRefused, exit 2)."""
    try:
        checks.check_log_dir(log_dir, resume=bool(cfg.resume))
        refuse_open_run_folder(log_dir, "--resume" if cfg.resume else "--log-dir")
    except checks.InputError as exc:
        if cfg.resume:
            raise ResumeRefused(str(exc)) from None
        raise


def check_devices(devices: list[str]) -> None:
    """Fail early, naming the problem, when CUDA devices are asked for but not there."""
    cuda = [d for d in devices if d != "cpu"]
    if not cuda:
        return
    import torch  # here only: the option checks before it (train's, probe's) answer without torch

    visible = torch.cuda.device_count() if torch.cuda.is_available() else 0
    wanted = max(int(d.split(":")[1]) for d in cuda) + 1
    if visible < wanted:
        raise TrainingError(
            f"--devices {','.join(devices)} needs {wanted} visible CUDA device(s), but {visible} "
            f"are visible (CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES', '<unset>')})"
        )


def check_disk(log_dir: Path, min_free_mb: float) -> None:
    probe = log_dir
    while not probe.exists():
        probe = probe.parent
    free_mb = shutil.disk_usage(probe).free / 2**20
    if free_mb < min_free_mb:
        raise TrainingError(
            f"not enough free disk space for logs under {log_dir}: {free_mb:.1f} MB free, "
            f"{min_free_mb:.1f} MB needed (--min-free-mb)"
        )
