"""The trainer's configuration: TrainConfig (one field per `sacscale train` flag), the
checks of its values that need no process, device or file, and the learner's SACConfig
made from it."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from pathlib import Path

from sacscale.checks import (
    MAX_CRITIC_UPDATES,
    MAX_ROWS,
    check_learner_values,
    check_seed,
    not_a_model_file,
    wait_problem,
)
from sacscale.cpus import MAX_CPU_ID
from sacscale.parallel.topology import shares_cuda_device
from sacscale.shapes import NUMBER, Maybe, shape_problem
from sacscale.task.walk_rules import PIPELINES, TILT_OBS

ALLREDUCE_PLACEMENTS = ("in-graph", "between-graphs")
MAX_RANKS = 64  # one rank a GPU or a CPU pool; the plan's --devices holds at most 64 too
MAX_ITERATIONS = 10**9  # a run of more would not end in any machine's life; the plan's bound too
# --min-free-mb's bound, 1 PiB: the logs need a few MB, and a value past any disk (1 EB) was
# refused only at the trainer's start, after the set's environment check, model and probe
MAX_FREE_MB = 2**30
# Printed by every rank once its first learner update (compile, warm-up, CUDA-graph
# capture, first iteration) has run to completion on the device.
FIRST_UPDATE_DONE = "first learner update done"
# Sizes that must be positive, named as their flags in the error.
POSITIVE_SIZES = ("num_envs", "batch_size", "iterations", "log_every", "num_critic_updates", "replay_per_env")
LEARNER_SIZE_BOUNDS = {"batch_size": MAX_ROWS, "replay_per_env": MAX_ROWS, "num_critic_updates": MAX_CRITIC_UPDATES}
# Learner settings `--extra` may not give. The task's sizes come from its model: another
# value built a learner of another shape, which failed in the collector with a traceback.
TASK_SIZES = ("actor_obs_dim", "critic_obs_dim", "action_dim")
# Settings with an option of their own, which the records (run.json, train_meta.json) and
# planning's checks read: given in --extra too, the learner took another value behind them.
OWN_OPTIONS = {"batch_size": "--batch-size", "replay_per_env": "--replay-per-env",
               "critic_updates": "--num-critic-updates", "actor_update_at": "--num-actor-updates",
               "obs_norm": "--obs-norm"}


class TrainingError(RuntimeError):
    """A run that cannot start or must stop (bad input, divergence, dead peer)."""


class ResumeRefused(TrainingError):
    """The --resume checkpoint or run folder (or a flag given with them) refused before the
    run starts: bad input (exit 2), not a run that failed."""


class RanksApart(TrainingError):
    """A synced run whose ranks ended with different learner states (the end-of-run check)."""


@dataclass
class TrainConfig:
    """Every knob of `sacscale train`; the field name is the CLI flag (`--num-envs`)."""

    # "cpu", "cpu,cpu" (2 gloo ranks), "0", "0,1" (CUDA indices), "0,0" (2 ranks, 1 GPU, gloo)
    devices: str = "cpu"
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
        items = [d.strip() for d in str(self.devices).split(",")]
        if items == [""]:
            raise TrainingError("--devices: empty device list")
        if "" in items:  # `0,,1` was read as `0,1`: a slip that may have meant another device
            raise TrainingError(f"--devices {self.devices}: an empty item; name each device once (e.g. cpu or 0,1)")
        if len(items) > MAX_RANKS:  # the plan's bound too: a typo of 100 ranks started 100 processes
            raise TrainingError(f"--devices: {len(items)} ranks, more than {MAX_RANKS}")
        out = [_device_name(d) for d in items]
        if len({d == "cpu" for d in out}) > 1:
            raise TrainingError("--devices: mix of CPU and CUDA ranks is not supported")
        return out

    def validate(self) -> None:
        """Every check that needs no process, device or file system state but the model's
        path; each error names the flag."""
        self._check_sizes()
        self._check_choices()
        self._check_limits()
        if self.model is not None and not Path(self.model).is_file():
            raise TrainingError(f"--model {self.model}: {not_a_model_file(self.model)}")
        check_seed(self.seed)
        self._check_shared_device()

    def _check_sizes(self) -> None:
        for name in POSITIVE_SIZES:
            if getattr(self, name) <= 0:
                raise TrainingError(f"--{name.replace('_', '-')} must be positive, got {getattr(self, name)}")
        for name, most in LEARNER_SIZE_BOUNDS.items():  # the learner's bounds (checks._RANGES), planning's too
            if getattr(self, name) > most:
                raise TrainingError(f"--{name.replace('_', '-')} must be at most {most:,}, got {getattr(self, name)}")
        if self.iterations > MAX_ITERATIONS:  # a typo of digits trained on, unbounded
            raise TrainingError(f"--iterations must be at most {MAX_ITERATIONS:,}, got {self.iterations:.3g}")
        if self.checkpoint_every < 0:  # `it % -1 == 0`: a checkpoint every iteration
            raise TrainingError(f"--checkpoint-every must be >= 0 (0: only at the end), got {self.checkpoint_every}")
        if self.num_actor_updates < 0 or self.num_actor_updates > self.num_critic_updates:
            raise TrainingError("--num-actor-updates must be in [0, --num-critic-updates]")

    def _check_choices(self) -> None:
        if self.grad_sync not in ("auto", "on", "off"):
            raise TrainingError("--grad-sync must be auto, on or off")
        if self.allreduce not in ALLREDUCE_PLACEMENTS:
            raise TrainingError(f"--allreduce must be {' or '.join(ALLREDUCE_PLACEMENTS)}, got {self.allreduce!r}")
        if self.env_pipeline not in PIPELINES:
            raise TrainingError(f"--env-pipeline must be {' or '.join(PIPELINES)}, got {self.env_pipeline!r}")
        if self.tilt_obs not in TILT_OBS:
            raise TrainingError(f"--tilt-obs must be {' or '.join(TILT_OBS)}, got {self.tilt_obs!r}")
        if self.env_pipeline == "halves" and self.num_envs < 2:
            raise TrainingError("--env-pipeline halves needs --num-envs >= 2 (or use serial)")

    def _check_limits(self) -> None:
        if problem := wait_problem(self.timeout_s, "--timeout-s"):  # before a rank builds its timedelta from it
            raise TrainingError(problem)
        if not 0 <= self.sim_threads <= MAX_CPU_ID + 1:  # planning's bound: no machine has more CPUs to run them
            raise TrainingError(f"--sim-threads must be in [0, {MAX_CPU_ID + 1}] (0: the pool's size), "
                                f"got {self.sim_threads}")
        if not (math.isfinite(self.min_free_mb) and 0 <= self.min_free_mb <= MAX_FREE_MB):  # inf passed `>= 0`
            raise TrainingError(f"--min-free-mb must be in [0, {MAX_FREE_MB}] (MB of free disk, at most 1 PiB), "
                                f"got {self.min_free_mb:g}")
        if not isinstance(self.extra, dict):
            raise TrainingError(f"--extra must be a JSON object, got {type(self.extra).__name__} {self.extra!r}")

    def _check_shared_device(self) -> None:
        """Ranks sharing a CUDA device sum gradients through gloo, which cannot be captured
        in a CUDA graph: the all-reduce must run between the graph segments."""
        if (shares_cuda_device(self.device_list()) and self.grad_sync != "off"
                and self.allreduce != "between-graphs"):
            raise TrainingError(
                f"--devices {self.devices}: ranks that share a CUDA device sync gradients through gloo, "
                "which cannot run inside a CUDA graph: add --allreduce between-graphs (or --grad-sync off)"
            )


def _device_name(item: str) -> str:
    """One `--devices` entry as a torch device name."""
    if item == "cpu":
        return "cpu"
    # ASCII digits: isdigit() is true for `\u0660` (and `\u00b2`), which no device is named by
    if item.startswith("cuda:") and item[5:].isascii() and item[5:].isdigit():
        return item
    if item.isascii() and item.isdigit():
        return f"cuda:{item}"
    raise TrainingError(f"--devices: {item!r} is neither 'cpu' nor a CUDA device index")


def compiles_losses(cfg: TrainConfig) -> bool:
    """torch.compile of the losses: asked for, and the gradient sync inside the one graph.
    With `--allreduce between-graphs` the losses run eagerly: compiled losses in a
    segmented capture gave wrong gradients (docs/faults.md), so the segmented mode, and
    every configuration compared with it, trades their speed for correct numbers."""
    return cfg.compile and cfg.allreduce == "in-graph"


def sac_config(cfg: TrainConfig):
    """The learner's config: reference values, this run's sizes, then `--extra` overrides."""
    # local: SACConfig imports torch, and the pipeline checks TrainConfig without it
    from sacscale.learn.config import SACConfig

    known = {f.name for f in fields(SACConfig)}
    unknown = sorted(set(cfg.extra) - known)
    if unknown:
        raise TrainingError(f"--extra: unknown learner setting(s) {unknown}; known: {sorted(known)}")
    for key in cfg.extra:
        if problem := extra_key_problem(key):
            raise TrainingError(problem)
    values = {
        "batch_size": cfg.batch_size,
        "critic_updates": cfg.num_critic_updates,
        "actor_update_at": actor_update_slots(cfg.num_critic_updates, cfg.num_actor_updates),
        "replay_per_env": cfg.replay_per_env,
        "obs_norm": cfg.obs_norm,
        **cfg.extra,
    }
    check_learner_values(values, set(cfg.extra))  # types first: SACConfig would take "x" for gamma
    try:
        return SACConfig(**values)
    except (TypeError, ValueError) as exc:
        raise TrainingError(f"learner settings: {exc}") from exc


def extra_key_problem(key: str, own_options: dict[str, str] | None = None, owner: str = "the trainer's own option",
                      read_by: str = "the run's records and checks") -> str | None:
    """Why `--extra` may not give the learner setting `key`, or None where it may. Another
    command with an --extra of learner settings passes its own options (learner-bench's --batch)."""
    own = OWN_OPTIONS if own_options is None else own_options
    if key in TASK_SIZES:
        return f"--extra {key}: the task's own size, which its model fixes; not a learner setting to give"
    if key in own:
        return f"--extra {key}: set by {owner} {own[key]} (which {read_by} read); give it there, not in --extra"
    return None


def actor_update_slots(n_critic: int, n_actor: int) -> tuple[int, ...]:
    """Actor updates spread evenly over the critic updates: 8 and 2 give (0, 4), the reference."""
    return tuple(range(0, n_critic, n_critic // n_actor))[:n_actor] if n_actor else ()


def syncs_gradients(cfg: TrainConfig, world_size: int) -> bool:
    """The gradient all-reduce hooks are on: asked for, or `auto` with more than one rank."""
    return cfg.grad_sync == "on" or (cfg.grad_sync == "auto" and world_size > 1)


# the JSON value each annotation of TrainConfig is saved as (a checkpoint's train_config)
_SAVED_SHAPES = {"int": int, "float": NUMBER, "bool": bool, "str": str, "str | None": Maybe(str), "dict": dict}


def saved_option_problem(key: str, value) -> str | None:
    """Why `value` is not what the trainer saves for option `key` in a checkpoint's
    train_config (its TrainConfig field, as JSON), e.g. "'train_config.seed' is Tensor";
    None when it is, or when `key` is no option."""
    kinds = {f.name: str(f.type) for f in fields(TrainConfig)}
    if key not in kinds:
        return None
    return shape_problem(value, _SAVED_SHAPES.get(kinds[key], object), f"train_config.{key}")
