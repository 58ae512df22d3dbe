"""The per-rank training loop: collector -> replay -> whole-iteration update -> weights.

One iteration consumes one env step of all of the rank's envs (num_envs new rows), runs
one learner iteration (8 critic+alpha and 2 actor updates, once the replay holds enough
rows) and publishes the actor back to the collector. The collector is already stepping
the next env step meanwhile (one iteration of policy lag), so on a GPU the learner's
work hides behind simulation.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import signal
import sys
import threading
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

import numpy as np

from sacscale import stopping
from sacscale.atomic import temporary_path
from sacscale.task.terms import REWARD_TERMS


# Collector times per iteration (ms), logged as Time/collector_<name> by a traced run.
# The first four are the collector's main thread and add up to its iteration; physics
# is the pool's busy time, and physics_wait the part of it the main thread waited for
# (inside env_step): with the halves pipeline the rest of the physics is hidden.
COLLECTOR_PHASES = ("env_step_ms", "action_select_ms", "replay_write_ms", "weight_sync_ms",
                    "physics_ms", "physics_wait_ms")
# Per-slot reward statistics, summed over a logging interval and logged as its means.
REWARD_STATS = (*(f"reward_{t}" for t in REWARD_TERMS), *(f"reward_raw_{t}" for t in REWARD_TERMS))


ALLREDUCE_PLACEMENTS = ("in-graph", "between-graphs")
# Printed by every rank once its first learner update (compile, warm-up, CUDA-graph
# capture, first iteration) has run to completion on the device.
FIRST_UPDATE_DONE = "first learner update done"


class TrainingError(RuntimeError):
    """A run that cannot start or must stop (bad input, divergence, dead peer)."""


class RanksApart(TrainingError):
    """A synced run whose ranks ended with different learner states (the end-of-run check)."""


@dataclass
class TrainConfig:
    """Every knob of `sacscale train`; the field name is the CLI flag (`--num-envs`)."""

    devices: str = "cpu"              # "cpu", "cpu,cpu" (2 gloo ranks), "0", "0,1" (CUDA indices), "0,0" (2 ranks, 1 GPU, gloo)
    num_envs: int = 2048              # per rank
    batch_size: int = 8192            # per rank
    num_critic_updates: int = 8
    num_actor_updates: int = 2
    iterations: int = 1000
    collector_cpu_ids: str = "auto"   # see sacscale.parallel.pools
    learner_cpu_ids: str = ""         # "" keeps the learners' affinity; "auto" or "0;16" pins them
    sim_threads: int = 0              # 0: the pool's size (or all usable CPUs when unpinned)
    env_pipeline: str = "halves"      # halves: task and actor work overlap physics; serial
    tilt_obs: str = "world"           # the task's tilt input: world (the reference's) or torso
    obs_norm: bool = False            # running mean/variance normalisation of actor and critic inputs
    seed: int = 0
    log_dir: str = "runs/train"
    log_every: int = 10
    checkpoint_every: int = 500       # iterations between checkpoints (0: only at the end)
    checkpoint_replay: bool = False   # checkpoints also hold each rank's replay buffer (1.8 GB at 2048 envs)
    resume: str = ""                  # run directory to continue from its last checkpoint
    trace: bool = False
    compile: bool = True              # CUDA only
    cuda_graph: bool = True           # CUDA only
    grad_sync: str = "auto"           # auto: all-reduce hooks when world size > 1; on; off
    allreduce: str = "in-graph"       # in-graph: inside the iteration's CUDA graph; between-graphs
    model: str | None = None          # compiled .mjb; None builds from the asset package
    timeout_s: float = 180.0          # longest wait for a collector step or a peer rank
    min_free_mb: float = 64.0         # free disk space needed under log_dir
    replay_per_env: int = 512
    extra: dict = field(default_factory=dict)

    def device_list(self) -> list[str]:
        items = [d.strip() for d in str(self.devices).split(",") if d.strip()]
        if not items:
            raise TrainingError("--devices: empty device list")
        out = []
        for d in items:
            if d == "cpu":
                out.append("cpu")
            elif d.startswith("cuda:") and d[5:].isdigit():
                out.append(d)
            elif d.isdigit():
                out.append(f"cuda:{d}")
            else:
                raise TrainingError(f"--devices: {d!r} is neither 'cpu' nor a CUDA device index")
        kinds = {d == "cpu" for d in out}
        if len(kinds) > 1:
            raise TrainingError("--devices: mix of CPU and CUDA ranks is not supported")
        return out

    def validate(self) -> None:
        """Every check that needs no process, device or file system state but the model's
        path; each error names the flag."""
        for name in ("num_envs", "batch_size", "iterations", "log_every", "num_critic_updates", "replay_per_env"):
            if getattr(self, name) <= 0:
                raise TrainingError(f"--{name.replace('_', '-')} must be positive, got {getattr(self, name)}")
        if self.num_actor_updates < 0 or self.num_actor_updates > self.num_critic_updates:
            raise TrainingError("--num-actor-updates must be in [0, --num-critic-updates]")
        if self.grad_sync not in ("auto", "on", "off"):
            raise TrainingError("--grad-sync must be auto, on or off")
        if self.allreduce not in ALLREDUCE_PLACEMENTS:
            raise TrainingError(f"--allreduce must be {' or '.join(ALLREDUCE_PLACEMENTS)}, got {self.allreduce!r}")
        from sacscale.task.halves import PIPELINES

        if self.env_pipeline not in PIPELINES:
            raise TrainingError(f"--env-pipeline must be {' or '.join(PIPELINES)}, got {self.env_pipeline!r}")
        from sacscale.task.g1_walk_flat import TILT_OBS

        if self.tilt_obs not in TILT_OBS:
            raise TrainingError(f"--tilt-obs must be {' or '.join(TILT_OBS)}, got {self.tilt_obs!r}")
        if self.env_pipeline == "halves" and self.num_envs < 2:
            raise TrainingError("--env-pipeline halves needs --num-envs >= 2 (or use serial)")
        if not (self.timeout_s > 0 and math.isfinite(self.timeout_s)):
            raise TrainingError(f"--timeout-s must be a positive number of seconds, got {self.timeout_s}")
        if self.sim_threads < 0:
            raise TrainingError(f"--sim-threads must be >= 0 (0: the pool's size), got {self.sim_threads}")
        if not self.min_free_mb >= 0:
            raise TrainingError(f"--min-free-mb must be >= 0, got {self.min_free_mb}")
        if not isinstance(self.extra, dict):
            raise TrainingError(f"--extra must be a JSON object, got {type(self.extra).__name__} {self.extra!r}")
        if self.model is not None and not Path(self.model).is_file():
            raise TrainingError(f"--model {self.model}: no such file")
        from sacscale.checks import check_seed

        check_seed(self.seed)
        self._check_shared_device()

    def _check_shared_device(self) -> None:
        """Ranks sharing a CUDA device sum gradients through gloo, which cannot be captured
        in a CUDA graph: the all-reduce must run between the graph segments."""
        from sacscale.parallel.launch import shares_cuda_device

        if (shares_cuda_device(self.device_list()) and self.grad_sync != "off"
                and self.allreduce != "between-graphs"):
            raise TrainingError(
                f"--devices {self.devices}: ranks that share a CUDA device sync gradients through gloo, "
                "which cannot run inside a CUDA graph: add --allreduce between-graphs (or --grad-sync off)"
            )


def compiles_losses(cfg: TrainConfig) -> bool:
    """torch.compile of the losses: asked for, and the gradient sync inside the one graph.
    With `--allreduce between-graphs` the losses run eagerly: compiled losses in a
    segmented capture gave wrong gradients (docs/faults.md), so the segmented mode, and
    every configuration compared with it, trades their speed for correct numbers."""
    return cfg.compile and cfg.allreduce == "in-graph"


def check_devices(devices: list[str]) -> None:
    """Fail early, naming the problem, when CUDA devices are asked for but not there."""
    cuda = [d for d in devices if d != "cpu"]
    if not cuda:
        return
    import torch

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


def sac_config(cfg: TrainConfig):
    """The learner's config: reference values, this run's sizes, then `--extra` overrides."""
    from sacscale.learn.config import SACConfig

    known = {f.name for f in fields(SACConfig)}
    unknown = sorted(set(cfg.extra) - known)
    if unknown:
        raise TrainingError(f"--extra: unknown learner setting(s) {unknown}; known: {sorted(known)}")
    # Actor updates spread evenly over the critic updates: 8 and 2 give (0, 4), the reference.
    n_critic, n_actor = cfg.num_critic_updates, cfg.num_actor_updates
    actor_at = tuple(range(0, n_critic, n_critic // n_actor))[:n_actor] if n_actor else ()
    values = {
        "batch_size": cfg.batch_size,
        "critic_updates": n_critic,
        "actor_update_at": actor_at,
        "replay_per_env": cfg.replay_per_env,
        "obs_norm": cfg.obs_norm,
        **cfg.extra,
    }
    from sacscale.checks import check_learner_values

    check_learner_values(values, set(cfg.extra))  # types first: SACConfig would take "x" for gamma
    try:
        return SACConfig(**values)
    except (TypeError, ValueError) as exc:
        raise TrainingError(f"learner settings: {exc}") from exc


# --------------------------------------------------------------------------------------
# One rank


class _Interval:
    """Sums of collector stats and learner phase times between two log points."""

    def __init__(self):
        self.total0 = 0  # all ranks' env steps at the previous log point
        self.nonfinite_named = False  # the first dropped non-finite row has been named in the log
        self.nonfinite_targets_named = False  # ... and the first non-finite critic target
        self.reset(time.perf_counter(), 0)

    def reset(self, now: float, steps: int) -> None:
        self.t0, self.steps0 = now, steps
        self.iters = 0
        self.sums: dict[str, float] = {}

    def add(self, key: str, value: float) -> None:
        if not math.isnan(value):
            self.sums[key] = self.sums.get(key, 0.0) + value


def _first_update_guard(cfg: TrainConfig, local_rank: int, device):
    """The compile lock keeps other trainers off this GPU during a first update. Ranks of
    this job that share the device must take their first update together (its warm-up
    all-reduces need every rank), so only the first of them takes the lock."""
    from sacscale.learn.compile_lock import first_update_lock

    devices = cfg.device_list()
    if devices.index(devices[local_rank]) != local_rank:
        return contextlib.nullcontext()
    return first_update_lock(device, stopping.check)


def run_rank(cfg: TrainConfig, rank: int, world_size: int, pool: list[int] | None, shm_prefix: str,
             local_rank: int = 0, learner_cpus: list[int] | None = None) -> None:
    """Train on one rank; the process group (if any) is already initialised."""
    import torch
    import torch.distributed as dist
    from torch.utils.tensorboard import SummaryWriter

    from sacscale.collect.collector import CollectorConfig, CollectorHandle
    from sacscale.collect.shm import STAT_INDEX
    from sacscale.parallel.grad_sync import allreduce_hooks, broadcast_state
    from sacscale.learn.learner import FastSACLearner
    from sacscale.cpus import pin_process

    device = torch.device(cfg.device_list()[local_rank])
    host_ranks = len(cfg.device_list())  # the ranks on this host (world_size counts every node's)
    distributed = dist.is_available() and dist.is_initialized()
    if device.type == "cuda":
        torch.cuda.set_device(device)
    else:
        # CPU ranks share the machine with their collectors: do not oversubscribe it.
        torch.set_num_threads(max(1, len(os.sched_getaffinity(0)) // (2 * host_ranks)))
    torch.manual_seed(cfg.seed)  # identical init on every rank; rank 0's copy is broadcast anyway

    sac = sac_config(cfg)
    learner = FastSACLearner(
        sac, cfg.num_envs, device,
        compile=compiles_losses(cfg) and device.type == "cuda",
        cuda_graph=cfg.cuda_graph and device.type == "cuda",
        seed=cfg.seed + 1000 * rank,
        hooks_in_graph=cfg.allreduce == "in-graph",
    )
    start_it, steps, curriculum = 0, 0, None
    if cfg.resume:
        start_it, steps, curriculum = _load_resume_state(cfg, learner, rank)
    if distributed:
        broadcast_state(learner.state_tensors())
    use_hooks = cfg.grad_sync == "on" or (cfg.grad_sync == "auto" and world_size > 1)
    if use_hooks:
        if not distributed:
            raise TrainingError("--grad-sync on needs a process group (set by the launcher)")
        learner.set_gradient_graph_hooks(allreduce_hooks(world_size))

    actor_numel = learner.actor_flat().numel()
    # Unpinned collectors split the usable CPUs between the ranks of this host.
    sim_threads = cfg.sim_threads or (len(pool) if pool else max(1, len(os.sched_getaffinity(0)) // host_ranks))
    collector = CollectorHandle(
        CollectorConfig(
            rank=rank, shm_prefix=f"{shm_prefix}_r{rank}", model_path=cfg.model, num_envs=cfg.num_envs,
            # a resumed run's envs start fresh episodes from their own seeds, not the first sitting's
            sim_threads=sim_threads, seed=cfg.seed + 1000 * rank + RESUME_SEED_STRIDE * start_it, cpu_ids=pool,
            # serial: the actor has the idle pool to itself; halves: it runs beside the
            # physics, so one thread, which would otherwise take CPUs from the physics
            torch_threads=sim_threads if cfg.env_pipeline == "serial" else 1,
            actor_numel=actor_numel, actor_kwargs=dict(
                obs_dim=sac.actor_obs_dim, action_dim=sac.action_dim, hidden=sac.actor_hidden,
                log_std_min=sac.log_std_min, log_std_max=sac.log_std_max, mean_clip=sac.mean_clip,
                obs_norm=sac.obs_norm),
            pipeline=cfg.env_pipeline,
            tilt_obs=cfg.tilt_obs,
            curriculum=curriculum,
        ),
        step_timeout_s=cfg.timeout_s,
    )
    # purge_step: TensorBoard hides what an interrupted sitting logged after its checkpoint
    writer = SummaryWriter(str(Path(cfg.log_dir) / "tb" / f"rank{rank}"), purge_step=start_it + 1 if start_it else None)
    on_cuda = device.type == "cuda"
    host_weights = torch.empty(actor_numel, dtype=torch.float32, pin_memory=on_cuda)
    state = learner.state_tensors()
    host_finite = torch.ones(len(state), dtype=torch.bool, pin_memory=on_cuda)
    staging: dict[str, torch.Tensor] = {}
    staged = torch.cuda.Event() if on_cuda else None
    interval = _Interval()
    interval.total0 = steps * world_size
    interval.reset(time.perf_counter(), steps)
    bar = _progress(cfg, rank, start_it)
    curriculum_now = curriculum
    counter = torch.zeros(1, dtype=torch.float64, device=device if on_cuda else "cpu")
    try:
        host_weights.copy_(learner.actor_flat())
        collector.start(host_weights.numpy())
        # --learner-cpu-ids pins after the first update: by then the collector has inherited
        # the full mask, and torch.compile's worker processes (started by the first compiled
        # call, sized from the full CPU count) have been forked outside the learner's CPUs.
        pin_pending = bool(learner_cpus)
        first_update = True
        done = {"iteration": start_it, "saved": start_it}  # last completed and last saved iteration

        def stop_check() -> None:
            """Raise on a stop signal (sacscale.stopping), first saving the checkpoint of
            the last completed iteration: the stop is seen only between iterations, where
            the state is whole. One rank only: ranks may see the stop at different
            iterations, so several ranks keep their last periodic checkpoint."""
            if stopping.requested() is not None and world_size == 1 and done["iteration"] > done["saved"]:
                save_checkpoint(cfg, sac, learner, rank, done["iteration"], steps, world_size, host_weights.numpy(),
                                curriculum_now)
                done["saved"] = done["iteration"]
            stopping.check()

        for it in range(start_it + 1, cfg.iterations + 1):
            stop_check()  # a stop signal ends the run here or in the wait below
            t0 = time.perf_counter()
            arrays, stats, k = collector.receive(check_stop=stop_check)
            t1 = time.perf_counter()
            if staged is not None:
                staged.synchronize()  # the previous H2D copy from the staging buffers is done
            batch = _stage(arrays, staging, device)
            stats = stats.copy()  # the slot's stats are rewritten once it is released
            learner.replay.add(**batch)
            learner.observe(batch["actor_obs"], batch["critic_obs"])
            if staged is not None:
                staged.record()
            t2 = time.perf_counter()
            if learner.ready():
                if first_update:  # compile, warm-up, capture: one trainer per GPU at a time
                    with _first_update_guard(cfg, local_rank, device):
                        _update(learner, rank, it)
                    first_update = False
                    # the run wrapper reads this line: a failure after it has cost learning
                    _say_above_bar(bar, f"sacscale train: rank {rank}: {FIRST_UPDATE_DONE} at iteration {it} "
                                        f"({learner.time_to_first_update:.1f} s: compile, warm-up, graph capture)")
                else:
                    _update(learner, rank, it)
                if pin_pending:
                    pin_process(learner_cpus)
                    torch.set_num_threads(len(learner_cpus))
                    pin_pending = False
            # Divergence check, outside the graph, every iteration: one flag per state tensor,
            # copied back with the actor weights (no extra host sync).
            host_finite.copy_(torch.stack([t.isfinite().all() for t in state.values()]), non_blocking=on_cuda)
            host_weights.copy_(learner.actor_flat(), non_blocking=on_cuda)
            if on_cuda:
                torch.cuda.current_stream().synchronize()
            t3 = time.perf_counter()
            if not bool(host_finite.all()):
                bad = [name for name, ok in zip(state, host_finite.tolist()) if not ok]
                raise TrainingError(f"rank {rank}: diverged at iteration {it}: non-finite learner state {bad}")
            weights = host_weights.numpy()
            collector.publish(weights)
            # Free the slot only now: the collector's next action on it then uses these
            # weights (one iteration of policy lag, whichever side is slower).
            collector.release(k)
            steps += cfg.num_envs

            interval.iters += 1
            for name in ("episode_return_sum", "episode_length_sum", "episode_count", "falls", "sim_errors",
                         *REWARD_STATS, *COLLECTOR_PHASES):
                interval.add(name, float(stats[STAT_INDEX[name]]))
            interval.sums["penalty_scale"] = float(stats[STAT_INDEX["penalty_scale"]])  # latest value
            curriculum_now = (float(stats[STAT_INDEX["penalty_scale"]]), float(stats[STAT_INDEX["curriculum_mean_length"]]))
            # Policy lag: iterations between the weights that chose this step's actions and the
            # learner's current ones (published versions count from 1 = the initial weights).
            lag = it - float(stats[STAT_INDEX["weights_version"]])
            interval.sums["policy_lag_max"] = max(interval.sums.get("policy_lag_max", 0.0), lag)
            interval.add("learner_wait_ms", 1e3 * (t1 - t0))
            interval.add("learner_h2d_ms", 1e3 * (t2 - t1))
            interval.add("learner_update_ms", 1e3 * (t3 - t2))
            if bar is not None:
                bar.update(1)
            if it % cfg.log_every == 0 or it == cfg.iterations:
                _log(writer, learner, interval, it, steps, counter, distributed, rank, bar, cfg.trace)
            if (cfg.checkpoint_every and it % cfg.checkpoint_every == 0) or it == cfg.iterations:
                save_checkpoint(cfg, sac, learner, rank, it, steps, world_size, host_weights.numpy(), curriculum_now)
                done["saved"] = it
            done["iteration"] = it
        agreement = check_ranks_agree(gather_state_digests(learner, world_size, distributed), rank, use_hooks)
        _write_meta_status(cfg, rank, "completed", steps, {**agreement, **_nonfinite_totals(learner, world_size, distributed)})
    finally:
        if bar is not None:
            bar.close()
        writer.close()
        collector.close()
        learner.close()  # CUDA graphs go before the process group


CHECKPOINT_FORMAT = ("sacscale-checkpoint", 2)
RANK_STATE_FORMAT = ("sacscale-rank-state", 1)
RESUME_SEED_STRIDE = 7919  # a resumed sitting's env seeds: seed + 1000 rank + 7919 x iteration


def checkpoint_path(log_dir: str | Path) -> Path:
    return Path(log_dir) / "checkpoints" / "final.pt"


def rank_state_path(log_dir: str | Path, rank: int) -> Path:
    return Path(log_dir) / "checkpoints" / f"rank{rank}.pt"


def _save_atomic(obj, path: Path) -> None:
    import io

    import torch

    from sacscale.atomic import atomic_write_bytes

    buf = io.BytesIO()
    torch.save(obj, buf)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, buf.getvalue())


def save_checkpoint(cfg: TrainConfig, sac, learner, rank: int, iteration: int, rank_steps: int, world_size: int,
                    actor_flat, curriculum) -> Path:
    """The state after `iteration`, in two parts, each written atomically (a stop during
    a write leaves the previous file):

    - `checkpoints/rank{r}.pt` (every rank): what differs between ranks: its random
      stream, its replay buffer (with --checkpoint-replay), the rows its normaliser has
      still to merge, its curriculum and env-step count;
    - `checkpoints/final.pt` (rank 0, written last): the policy (its published weights,
      which `sacscale evaluate` and `render` read) and what every rank holds alike:
      networks, targets, log-alpha, normaliser, AdamW moments; the run's configuration.

    Both name the iteration, so a resume can tell a torn pair."""
    import torch

    from sacscale.hashes import sha256_file

    state = learner.learning_state(with_replay=cfg.checkpoint_replay)
    _save_atomic({
        "format": RANK_STATE_FORMAT[0], "version": RANK_STATE_FORMAT[1], "rank": rank,
        "iteration": int(iteration), "env_steps": int(rank_steps),
        "curriculum": None if curriculum is None else [float(v) for v in curriculum],
        "learner": {k: state[k] for k in ("rng", "iterations", "replay", "fresh", "fresh_pending") if k in state},
    }, rank_state_path(cfg.log_dir, rank))
    path = checkpoint_path(cfg.log_dir)
    if rank != 0:
        return path
    _save_atomic({
        "format": CHECKPOINT_FORMAT[0],
        "version": CHECKPOINT_FORMAT[1],
        "actor_kwargs": dict(obs_dim=sac.actor_obs_dim, action_dim=sac.action_dim, hidden=list(sac.actor_hidden),
                             log_std_min=sac.log_std_min, log_std_max=sac.log_std_max, mean_clip=sac.mean_clip,
                             obs_norm=sac.obs_norm),
        "actor_flat": torch.as_tensor(np.asarray(actor_flat, dtype=np.float32)).clone(),
        "task": {"tilt_obs": cfg.tilt_obs},
        "iteration": int(iteration),
        "env_steps": int(rank_steps),
        "total_env_steps": int(rank_steps) * world_size,
        "world_size": world_size,
        "model_sha256": sha256_file(cfg.model) if cfg.model else None,
        "train_config": json.loads(json.dumps(asdict(cfg), default=str)),
        "learner_state": state["tensors"],
        "optimizers": state["optimizers"],
        "replay_saved": bool(cfg.checkpoint_replay),
    }, path)
    return path


# What a policy-only copy of final.pt leaves out: the learning state a resume needs
# (networks' other halves, targets, optimiser moments), most of the file's size.
LEARNING_STATE_KEYS = ("learner_state", "optimizers")


def write_policy_only(full: Path, out: Path) -> dict:
    """A copy of checkpoint `full` without its learning state, at `out`: what `sacscale
    evaluate` and `render` read (the published actor, its config, the counters). The copy
    names the full file (`policy_only_of`: SHA-256 and size). Returns that entry."""
    import hashlib
    import io

    import torch

    data = full.read_bytes()  # read once: hashed and loaded from the same bytes
    ckpt = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    if not isinstance(ckpt, dict) or ckpt.get("format") != CHECKPOINT_FORMAT[0]:
        raise ValueError(f"{full}: not a {CHECKPOINT_FORMAT[0]} file")
    source = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
    _save_atomic({k: v for k, v in ckpt.items() if k not in LEARNING_STATE_KEYS} | {"policy_only_of": source}, out)
    return source


# Flags a resumed run may change: where and how long it runs, not what it learns.
RESUME_MAY_CHANGE = ("iterations", "log_every", "checkpoint_every", "checkpoint_replay", "trace", "timeout_s",
                     "min_free_mb", "collector_cpu_ids", "learner_cpu_ids", "sim_threads", "model", "resume", "log_dir",
                     "allreduce")


def read_checkpoint(path: str | Path) -> dict:
    import torch

    path = Path(path)
    if not path.is_file():
        raise TrainingError(f"{path}: no checkpoint there")
    from sacscale.checks import checkpoint_problem

    problem = checkpoint_problem(path)
    if problem:
        raise TrainingError(f"{path}: {problem}")
    try:
        ckpt = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # noqa: BLE001 - a truncated or foreign file
        raise TrainingError(f"{path}: not a readable checkpoint ({type(exc).__name__}: {exc})") from exc
    if not isinstance(ckpt, dict) or ckpt.get("format") not in (CHECKPOINT_FORMAT[0], RANK_STATE_FORMAT[0]):
        raise TrainingError(f"{path}: not a sacscale checkpoint")
    return ckpt


def resume_config(cfg: TrainConfig) -> TrainConfig:
    """The configuration of a resumed run: the checkpoint's, with only the flags of
    RESUME_MAY_CHANGE taken from this command; any other flag given with a value that
    differs from the run's is an error that names it."""
    run_dir = Path(cfg.resume)
    ckpt = read_checkpoint(checkpoint_path(run_dir))
    if ckpt["format"] != CHECKPOINT_FORMAT[0] or ckpt.get("version", 1) < 2:
        raise TrainingError(f"--resume {run_dir}: its checkpoint (format version {ckpt.get('version', 1)}) holds the "
                            "policy only, not the learning state; it cannot be resumed")
    if "policy_only_of" in ckpt or "learner_state" not in ckpt:
        raise TrainingError(f"--resume {run_dir}: its checkpoint is a policy-only copy; a pipeline run's learning "
                            "state is in logs/<run set>/learning_state/<run>/ (its run.json says where): resume "
                            "from a directory that holds it")
    known = {f.name for f in fields(TrainConfig)}
    saved = TrainConfig(**{k: v for k, v in ckpt["train_config"].items() if k in known})
    defaults = TrainConfig()
    merged = {}
    for f in fields(TrainConfig):
        given, before = getattr(cfg, f.name), getattr(saved, f.name)
        if given == getattr(defaults, f.name):
            merged[f.name] = before  # not given: the run's own value
        elif f.name in RESUME_MAY_CHANGE or given == before:
            merged[f.name] = given
        else:
            raise TrainingError(f"--resume: --{f.name.replace('_', '-')} {given} differs from the resumed run's "
                                f"{before}; a resumed run keeps what it learns with")
    if cfg.log_dir != defaults.log_dir and Path(cfg.log_dir).resolve() != run_dir.resolve():
        raise TrainingError(f"--resume {run_dir} continues in its own directory; --log-dir {cfg.log_dir} differs")
    merged.update(log_dir=str(run_dir), resume=str(run_dir))
    out = TrainConfig(**merged)
    done = int(ckpt["iteration"])
    if out.iterations <= done:
        raise TrainingError(f"--resume {run_dir}: its checkpoint is at iteration {done}; "
                            f"give --iterations larger than that (the new total), got {out.iterations}")
    if out.model and ckpt.get("model_sha256"):
        from sacscale.hashes import sha256_file

        if Path(out.model).is_file() and sha256_file(out.model) != ckpt["model_sha256"]:
            raise TrainingError(f"--model {out.model} is not the model the run trained on "
                                f"(sha256 {ckpt['model_sha256'][:12]}...)")
    for rank in range(int(ckpt.get("world_size", 1))):
        part = rank_state_path(run_dir, rank)
        if not part.is_file():
            raise TrainingError(f"--resume {run_dir}: {part} is missing")
    return out


def _load_resume_state(cfg: TrainConfig, learner, rank: int):
    """Put the checkpoint's learning state into `learner`; returns (iteration, env steps,
    curriculum) of this rank."""
    shared = read_checkpoint(checkpoint_path(cfg.log_dir))
    mine = read_checkpoint(rank_state_path(cfg.log_dir, rank))
    if int(mine["iteration"]) != int(shared["iteration"]):
        raise TrainingError(f"--resume {cfg.log_dir}: rank {rank}'s state is from iteration {mine['iteration']}, "
                            f"the checkpoint from {shared['iteration']} (a stop between the two writes); "
                            "nothing consistent to resume")
    try:
        learner.load_learning_state({**mine["learner"], "tensors": shared["learner_state"],
                                     "optimizers": shared["optimizers"]})
    except ValueError as exc:
        raise TrainingError(f"--resume {cfg.log_dir}: {exc}") from exc
    if rank == 0:
        refill = "" if mine["learner"].get("replay") is not None else (
            f"; its replay buffer was not saved (--checkpoint-replay): learning waits until "
            f"{learner.learning_starts} new rows are in ({-(-learner.learning_starts // learner.num_envs)} iterations)")
        print(f"sacscale train: resuming {cfg.log_dir} at iteration {shared['iteration']} "
              f"({int(shared['total_env_steps']):,} env steps){refill}", file=sys.stderr, flush=True)
    curriculum = tuple(mine["curriculum"]) if mine.get("curriculum") else None
    return int(shared["iteration"]), int(mine["env_steps"]), curriculum


def _update(learner, rank: int, it: int) -> None:
    """One learner iteration; an update that fails on non-finite state (e.g. the C51
    projection indexing with NaN) is reported as the divergence it is."""
    import torch

    try:
        learner.update()
    except RuntimeError as exc:
        try:
            bad = [name for name, t in learner.state_tensors().items() if not bool(torch.isfinite(t).all())]
        except Exception:  # noqa: BLE001 - e.g. a CUDA context lost to a device-side assert
            bad = []
        if bad:
            raise TrainingError(
                f"rank {rank}: diverged at iteration {it}: non-finite learner state {bad}; the update failed on it: {exc}"
            ) from exc
        raise


def _stage(arrays: dict[str, np.ndarray], staging: dict, device) -> dict:
    """Copy one slot out of shared memory (so it can be freed) and start its H2D copy."""
    import torch

    out = {}
    for key, array in arrays.items():
        if device.type == "cuda":
            buf = staging.get(key)
            if buf is None:
                buf = staging[key] = torch.empty(array.shape, dtype=torch.float32, pin_memory=True)
            buf.numpy()[...] = array
            out[key] = buf.to(device, non_blocking=True)
        else:
            out[key] = torch.from_numpy(array.copy())
    return out


def _log(writer, learner, interval: _Interval, it: int, steps: int, counter, distributed: bool, rank: int, bar, trace: bool) -> None:
    import torch.distributed as dist

    now = time.perf_counter()
    dt = max(now - interval.t0, 1e-9)
    rank_fps = (steps - interval.steps0) / dt
    counter.fill_(float(steps))
    total_steps = steps
    if distributed:
        dist.all_reduce(counter)
        total_steps = int(counter.item())
    total_fps = (total_steps - interval.total0) / dt
    interval.total0 = total_steps

    metrics = learner.metrics() if learner.ready() else {}
    bad = [k for k, v in metrics.items() if not math.isfinite(v)]
    if bad:
        raise TrainingError(f"rank {rank}: diverged at iteration {it}: non-finite learner metrics {bad}")
    nonfinite = _nonfinite_scalars(learner, interval, it, rank, bar)

    s, n = interval.sums, max(interval.iters, 1)
    scalars = {
        "Perf/rank_env_steps": steps,
        "Perf/rank_fps": rank_fps,
        "Perf/iteration": it,
        "Curriculum/penalty_scale": s.get("penalty_scale", math.nan),
        "Env/sim_errors": s.get("sim_errors", 0.0),
        "Train/policy_lag": s.get("policy_lag_max", 0.0),
        **nonfinite,
    }
    if rank == 0:
        scalars["Perf/total_env_steps"] = total_steps
        scalars["Perf/total_fps"] = total_fps
    # every reward term, mean over envs and over the interval's iterations: Reward/ its
    # weighted share of the per-step reward, RewardRaw/ the unweighted term
    for term in REWARD_TERMS:
        scalars[f"Reward/{term}"] = s.get(f"reward_{term}", math.nan) / n
        scalars[f"RewardRaw/{term}"] = s.get(f"reward_raw_{term}", math.nan) / n
    if s.get("episode_count", 0) > 0:
        scalars["Episode/return"] = s["episode_return_sum"] / s["episode_count"]
        scalars["Episode/length"] = s["episode_length_sum"] / s["episode_count"]
        scalars["Episode/fall_rate"] = s.get("falls", 0.0) / s["episode_count"]  # of the ended episodes, fell
    for key, tag in (("critic_loss", "Loss/critic"), ("actor_loss", "Loss/actor"),
                     ("alpha_loss", "Loss/alpha"), ("alpha", "Train/alpha"),
                     ("entropy", "Train/entropy"), ("q_mean", "Train/q_mean")):
        if key in metrics:
            scalars[tag] = metrics[key]
    if trace:
        for phase in COLLECTOR_PHASES:
            scalars[f"Time/collector_{phase}"] = s.get(phase, 0.0) / n
        for phase in ("learner_wait_ms", "learner_h2d_ms", "learner_update_ms"):
            scalars[f"Time/{phase}"] = s.get(phase, 0.0) / n
    for tag, value in scalars.items():
        if isinstance(value, float) and math.isnan(value):
            continue
        writer.add_scalar(tag, value, it)
    writer.flush()
    if bar is not None:
        bar.set_postfix(fps=f"{total_fps:,.0f}", ret=f"{scalars.get('Episode/return', math.nan):.2f}", refresh=False)
    interval.reset(now, steps)


def _nonfinite_scalars(learner, interval: _Interval, it: int, rank: int, bar) -> dict[str, int]:
    """The learner's non-finite counters as scalars (read at log time: the hot path only
    counts on the device), and, once per run, a line naming the first dropped row."""
    counts = learner.nonfinite_counts()
    if counts["nonfinite_rows"] and not interval.nonfinite_named:
        first = learner.replay.describe_first_nonfinite()
        at = it - (learner.replay.adds - 1 - first["add"])  # one add per iteration
        _say_above_bar(bar, f"sacscale train: rank {rank}: dropped a non-finite transition at iteration {at}: "
                            f"env {first['row']}, field(s) {', '.join(first['fields'])} (never sampled; "
                            f"Faults/nonfinite_rows counts every such row)")
        interval.nonfinite_named = True
    if counts["nonfinite_targets"] and not interval.nonfinite_targets_named:
        # the replay never samples a dropped row: these targets came from rows that passed
        # its check, so from the learner's own numbers (or memory changed behind the check)
        _say_above_bar(bar, f"sacscale train: rank {rank}: {counts['nonfinite_targets']} critic target(s) not finite "
                            f"by iteration {it} although their rows passed the replay's check; given no mass "
                            f"(Faults/nonfinite_targets counts them)")
        interval.nonfinite_targets_named = True
    return {"Faults/nonfinite_rows": counts["nonfinite_rows"], "Faults/nonfinite_targets": counts["nonfinite_targets"]}


def _nonfinite_totals(learner, world_size: int, distributed: bool) -> dict:
    """train_meta.json's non-finite counters of this sitting: every rank's sum, and by rank."""
    import torch.distributed as dist

    mine = learner.nonfinite_counts()
    by_rank = [mine]
    if distributed and world_size > 1:
        by_rank = [None] * world_size
        dist.all_gather_object(by_rank, mine)
    return {"nonfinite_rows": sum(c["nonfinite_rows"] for c in by_rank),
            "nonfinite_targets": sum(c["nonfinite_targets"] for c in by_rank),
            "nonfinite_rows_by_rank": [c["nonfinite_rows"] for c in by_rank]}


def _say_above_bar(bar, message: str) -> None:
    """One line on stderr that does not break rank 0's progress bar."""
    if bar is not None:
        bar.write(message, file=sys.stderr)
    else:
        print(message, file=sys.stderr, flush=True)


def _progress(cfg: TrainConfig, rank: int, start_it: int = 0):
    if rank != 0:
        return None
    from tqdm import tqdm

    # tqdm's default lock includes a multiprocessing lock: a named semaphore, which a
    # spawned rank (it ends with os._exit) would leave to the resource tracker's warning
    tqdm.set_lock(threading.RLock())
    interactive = sys.stderr.isatty()
    return tqdm(total=cfg.iterations, initial=start_it, desc="train", unit="it", file=sys.stderr,
                mininterval=0.5 if interactive else 10.0, dynamic_ncols=interactive)


# --------------------------------------------------------------------------------------
# Run metadata


def meta_path(cfg: TrainConfig) -> Path:
    return Path(cfg.log_dir) / "train_meta.json"


def write_meta(cfg: TrainConfig, world_size: int, pool_plan: dict) -> None:
    """train_meta.json at start. A resumed run keeps the first sitting's record and appends
    this sitting to `sittings` (each with its configuration, start and starting iteration)."""
    import torch

    path = meta_path(cfg)
    if cfg.resume and path.is_file():
        meta = json.loads(path.read_text())
        sitting = {"config": asdict(cfg), "collector_pools": pool_plan, "start_time": time.time(),
                   "from_iteration": int(read_checkpoint(checkpoint_path(cfg.log_dir))["iteration"]),
                   "torch": torch.__version__, "previous_status": meta.get("status")}
        meta.setdefault("sittings", []).append(sitting)
        meta.update(status="running", config=asdict(cfg))
        meta.pop("end_time", None)
        meta.pop("error", None)
        _atomic_json(path, meta)
        return
    meta = {
        "config": asdict(cfg),
        "world_size": world_size,
        "devices": cfg.device_list(),
        "losses_compiled": compiles_losses(cfg),
        "collector_pools": pool_plan,
        "env_steps_accounting": "Perf/total_env_steps is written by rank 0 from an all-reduced sum of every rank's cumulative env steps",
        "torch": torch.__version__,
        "python": sys.version.split()[0],
        "start_time": time.time(),
        "status": "running",
    }
    created = [d for d in (path.parent, *path.parent.parents) if not d.exists()]
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        _atomic_json(path, meta, exclusive=True)
    except BaseException:
        for d in created:  # the run did not start: leave no empty log directory behind
            try:
                d.rmdir()
            except OSError:
                break
        raise


def _write_meta_status(cfg: TrainConfig, rank: int, status: str, steps: int, extra: dict | None = None) -> None:
    if rank != 0:
        return
    path = meta_path(cfg)
    meta = json.loads(path.read_text()) if path.exists() else {}
    meta.update(status=status, end_time=time.time(), rank0_env_steps=steps, **(extra or {}))
    _atomic_json(path, meta)


def learner_state_digest(learner) -> str:
    """SHA-256 over the bytes of the learner state every rank holds alike (networks,
    targets, log-alpha, normaliser), in name order."""
    import hashlib

    import torch

    digest = hashlib.sha256()
    for name, tensor in sorted(learner.state_tensors().items()):
        digest.update(name.encode())
        digest.update(tensor.detach().cpu().contiguous().view(-1).view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()


def gather_state_digests(learner, world_size: int, distributed: bool) -> list[str]:
    """Every rank's `learner_state_digest`, in rank order (one all-gather)."""
    import torch.distributed as dist

    mine = learner_state_digest(learner)
    if not (distributed and world_size > 1):
        return [mine]
    digests = [None] * world_size
    dist.all_gather_object(digests, mine)
    return digests


def check_ranks_agree(digests: list[str], rank: int, synced: bool) -> dict:
    """With the gradient sync on, the ranks must end bit-identical (the all-reduce and
    the start-up broadcast keep them so): a run whose ranks ended apart failed its
    synchronisation, and fails. Without it (`--grad-sync off`) they are only recorded."""
    apart = [r for r, d in enumerate(digests) if d != digests[0]]
    if apart and synced:
        raise RanksApart(f"rank {rank}: at the end of the run the learner state of rank(s) {apart} differs "
                            f"from rank 0's (state SHA-256 by rank: {digests}): the data-parallel sync failed")
    return {"final_learner_state_sha256_by_rank": digests, "ranks_identical": not apart}


# Trailing blanks reserve room in train_meta.json, so the final status can still be
# written in place when the disk is full (a new file then cannot be made).
META_RESERVE = 2048


def _atomic_json(path: Path, data: dict, exclusive: bool = False) -> None:
    """Write `path` atomically (exclusive: only if it does not exist yet, so two runs
    started at once into one --log-dir cannot both claim it). A full disk is a
    TrainingError naming the file; no temporary file is left."""
    import errno

    text = json.dumps(data, indent=2, default=str) + "\n" + " " * META_RESERVE + "\n"
    # per process and thread: rank 0, the launcher and a stop watchdog may all write
    tmp = temporary_path(path)
    try:
        tmp.write_text(text)
        if exclusive:
            try:
                os.link(tmp, path)
            except FileExistsError:
                raise TrainingError(f"--log-dir {path.parent}: another run claimed it first "
                                    f"({path.name} appeared after the checks)") from None
        else:
            os.replace(tmp, path)
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT) and not exclusive and _rewrite_in_place(path, text):
            return
        raise TrainingError(f"cannot write {path}: {exc.strerror or exc}"
                            + (" (disk full)" if exc.errno in (errno.ENOSPC, errno.EDQUOT) else "")) from exc
    finally:
        try:
            tmp.unlink()
        except FileNotFoundError:
            pass


def _rewrite_in_place(path: Path, text: str) -> bool:
    """Overwrite the existing file within the blocks it already holds (no new space)."""
    data = text.rstrip().encode() + b"\n"
    try:
        if not path.exists() or len(data) > path.stat().st_size:
            return False
        with open(path, "r+b") as fh:
            fh.write(data)
            fh.truncate(len(data))
        return True
    except OSError:
        return False


# --------------------------------------------------------------------------------------
# The job: checks first, then one rank in-process or one process per rank


def _rank_main(rank: int, world_size: int, cfg: TrainConfig, pool, shm_prefix: str, learner_cpus=None) -> None:
    """Body of a spawned rank (the launcher has set up the process group and SIGTERM)."""
    run_rank(cfg, rank, world_size, pool, shm_prefix, local_rank=rank, learner_cpus=learner_cpus)


def run_training(cfg: TrainConfig) -> None:
    """Validate everything that can be checked before starting, then train."""
    from sacscale.parallel import launch
    from sacscale.parallel.pools import PoolError, resolve_learner_cpus, resolve_pools

    if cfg.resume:
        cfg = resume_config(cfg)
    from sacscale import checks

    cfg.validate()
    sac = sac_config(cfg)  # --extra: unknown or invalid learner settings fail here, before any process starts
    checks.check_sizes(cfg, sac)
    devices = cfg.device_list()
    check_devices(devices)
    external = "RANK" in os.environ and "WORLD_SIZE" in os.environ
    world_size = int(os.environ["WORLD_SIZE"]) if external else len(devices)
    local_ranks = len(devices)
    try:
        plan = resolve_pools(cfg.collector_cpu_ids, local_ranks)
        learner_cpus = resolve_learner_cpus(cfg.learner_cpu_ids, plan.pools)
    except PoolError as exc:
        raise TrainingError(str(exc)) from exc
    log_dir = Path(cfg.log_dir)
    if not external or int(os.environ["RANK"]) == 0:
        # under an external launcher the other ranks share rank 0's directory, which rank 0
        # may already have claimed (train_meta.json): only rank 0 checks it is unused
        checks.check_log_dir(log_dir, resume=bool(cfg.resume))
    checks.check_writable(log_dir)
    check_disk(log_dir, cfg.min_free_mb)
    checks.check_shared_memory(cfg.num_envs, local_ranks, sac)
    checks.check_model(cfg.model)  # last: it imports MuJoCo and builds a 2-env task
    from sacscale.collect.shm import clean_stale

    clean_stale()  # blocks of runs SIGKILLed mid-creation (their creators provably gone)
    backend = launch.backend_for(devices)
    if cfg.compile and not compiles_losses(cfg):
        print("sacscale train: --allreduce between-graphs: the losses run eagerly (compiled losses in a "
              "segmented graph gave wrong gradients; docs/faults.md)", file=sys.stderr, flush=True)
    prefix = launch.job_prefix()

    previous_handlers = stopping.install(on_first=lambda signum: _arm_cleanup_watchdog(cfg, prefix, signum))
    try:
        if external:
            rank = int(os.environ["RANK"])
            local_rank = int(os.environ.get("LOCAL_RANK", rank))
            if local_rank >= local_ranks:
                raise TrainingError(f"LOCAL_RANK={local_rank} but --devices lists {local_ranks} device(s) on this host")
            if rank == 0:
                write_meta(cfg, world_size, {**plan.as_dict(), "learner_affinity": learner_cpus})
            try:
                launch.init_group(backend, rank, world_size, cfg.timeout_s)
                try:
                    run_rank(cfg, rank, world_size, plan.pools[local_rank], prefix, local_rank=local_rank,
                             learner_cpus=learner_cpus[local_rank])
                finally:
                    launch.destroy_group()
            except BaseException as exc:
                if rank == 0:
                    _mark_failed(cfg, exc)
                raise
            return

        write_meta(cfg, world_size, {**plan.as_dict(), "learner_affinity": learner_cpus})
        try:
            if world_size == 1:
                needs_group = cfg.grad_sync == "on"
                if needs_group:
                    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(launch.free_port()))
                    launch.init_group(backend, 0, 1, cfg.timeout_s)
                try:
                    run_rank(cfg, 0, 1, plan.pools[0], prefix, local_rank=0, learner_cpus=learner_cpus[0])
                finally:
                    launch.destroy_group()
            else:
                launch.spawn_and_supervise(
                    _rank_main, world_size, backend, cfg.timeout_s,
                    args_for_rank=lambda r: (cfg, plan.pools[r], prefix, learner_cpus[r]),
                    shm_prefix=prefix,
                    describe_rank=lambda r: f"device {devices[r]}",
                    check_stop=stopping.check,
                )
        except BaseException as exc:
            _mark_failed(cfg, exc)
            raise
    finally:
        stopping.restore(previous_handlers)


CLEANUP_GRACE_S = 20.0


def _arm_cleanup_watchdog(cfg: TrainConfig, shm_prefix: str, signum: int) -> None:
    """Armed by the first stop signal (sacscale.stopping): should the stop not complete
    within CLEANUP_GRACE_S (e.g. the signal came during a first compile, which has no
    stop check inside), kill the children, record `interrupted` and exit, so a stop is
    always bounded in time."""
    import multiprocessing

    from sacscale.collect.shm import unlink_prefix
    from sacscale.parallel.launch import Interrupted

    def expire():
        sys.stderr.write(f"sacscale train: cleanup after {signal.Signals(signum).name} took over "
                         f"{CLEANUP_GRACE_S:.0f} s; killing child processes and exiting\n")
        sys.stderr.flush()
        for child in multiprocessing.active_children():
            child.kill()
        unlink_prefix(shm_prefix)
        try:
            _mark_failed(cfg, Interrupted(signum))
        except Exception:  # noqa: BLE001 - the exit must happen whatever the disk says
            pass
        os._exit(128 + signum)

    timer = threading.Timer(CLEANUP_GRACE_S, expire)
    timer.daemon = True
    timer.start()


def _mark_failed(cfg: TrainConfig, exc: BaseException) -> None:
    """The job failed: say so in train_meta.json, even if rank 0 had already written
    "completed" (another rank can fail after it), so the file agrees with the exit status."""
    from sacscale.parallel.launch import Interrupted

    path = meta_path(cfg)
    try:
        meta = json.loads(path.read_text()) if path.exists() else None
    except (OSError, json.JSONDecodeError):
        meta = {}
    if meta is None:
        return
    status = "interrupted" if isinstance(exc, (Interrupted, KeyboardInterrupt)) else "failed"
    if meta.get("status") == "completed":
        meta["rank0_completed"] = True
    meta.update(status=status, error=f"{type(exc).__name__}: {exc}", end_time=time.time())
    try:
        _atomic_json(path, meta)
    except TrainingError as write_exc:  # the job's own error is the one to report
        sys.stderr.write(f"sacscale train: {write_exc}\n")
