"""Resuming a run from its checkpoint: the resumed sitting's configuration (what may
change and what must not) and the learning state each rank loads."""

from __future__ import annotations

import json
import math
import os
import sys
from dataclasses import fields
from pathlib import Path

import torch

from sacscale.atomic import file_kind
from sacscale.checks import InputError
from sacscale.hashes import sha256_file
from sacscale.learn.learning_state import RandomStateRefused
from sacscale.learn.state_names import state_tensor_dtype
from sacscale.saved_tensors import tensor_problem, tree_problem
from sacscale.shapes import NUMBER, Maybe, record_problem
from sacscale.train.checkpoint import CHECKPOINT_FORMAT, checkpoint_path, read_checkpoint, resume_rank_state_path
from sacscale.train.config import ResumeRefused, TrainConfig, TrainingError, sac_config, saved_option_problem
from sacscale.train.out_of_memory import is_out_of_memory
from sacscale.train.preflight import launcher_env
from sacscale.train.resume_checks import (learner_problem, normaliser_problem, optimizer_steps_problem,
                                          rank_counts_problem, state_names_problem)
from sacscale.train.resume_trial import first_observations, policy_problem

RESUME_SEED_STRIDE = 7919  # a resumed sitting's env seeds: seed + 1000 rank + 7919 x iteration
# Flags a resumed run may change: where and how long it runs, not what it learns.
RESUME_MAY_CHANGE = ("iterations", "log_every", "checkpoint_every", "checkpoint_replay", "trace", "timeout_s",
                     "min_free_mb", "collector_cpu_ids", "learner_cpu_ids", "sim_threads", "model", "resume", "log_dir",
                     "allreduce")


# What a resume reads of final.pt and of each rank{r}.pt, beyond their format: a crafted or
# damaged checkpoint of another shape ended in a KeyError or TypeError naming no file.
FINAL_SHAPE = {"iteration": int, "world_size": int, "total_env_steps": NUMBER, "train_config": dict,
               "learner_state": dict, "optimizers": dict, "model_sha256": Maybe(str)}
RANK_SHAPE = {"iteration": int, "env_steps": int, "learner": dict, "curriculum": Maybe([NUMBER])}
MAX_RANKS = 64
# AdamW's moments and step counts, as the trainer saves them (CPU copies of float32 tensors)
OPTIMIZER_DTYPE = "float32"
OPTIMIZERS = ("critic", "alpha", "actor")
ADAMW_MOMENTS = ("step", "exp_avg", "exp_avg_sq")
# alpha = exp(log_alpha) in float32: above this it is inf, and the first update diverges
LOG_ALPHA_MAX = math.log(torch.finfo(torch.float32).max)


class BadCheckpoint(ResumeRefused):
    """A resume checkpoint holding a tensor the trainer never writes."""


def _not_written(path: Path, problem: str) -> BadCheckpoint:
    return BadCheckpoint(f"--resume: {path}: not a checkpoint the trainer wrote ({problem})")


def _count_problem(ckpt: dict, shape: dict) -> str | None:
    """A step count that is not a finite number >= 0, or a curriculum value that is not finite:
    a NaN count ended in an int() conversion naming no file once the run had started."""
    for key in ("total_env_steps", "env_steps"):
        if key in shape and not (math.isfinite(ckpt[key]) and ckpt[key] >= 0):
            return f"its {key} {ckpt[key]!r} is not a finite count of steps"
    curriculum = ckpt.get("curriculum") if "curriculum" in shape else None
    if curriculum is not None and len(curriculum) != 2:  # the collector continues from (scale, mean length)
        return f"its curriculum holds {len(curriculum)} values, not 2 (penalty scale, mean episode length)"
    if curriculum is not None and not all(math.isfinite(v) for v in curriculum):
        return "its curriculum holds a value that is not finite"
    return None


def _check_shape(path: Path, ckpt: dict, shape: dict) -> None:
    """TrainingError naming `path` and its field when `ckpt` is not of `shape` (and, for
    final.pt, when a saved option is not of its TrainConfig type)."""
    problem = record_problem(ckpt, shape)
    if problem is None and "train_config" in shape:
        problem = next((f"its {p}" for key, value in ckpt["train_config"].items()
                        if (p := saved_option_problem(key, value))), None)
    if problem is None and "world_size" in shape and not 1 <= ckpt["world_size"] <= MAX_RANKS:
        problem = f"its world_size {ckpt['world_size']} is not 1..{MAX_RANKS}"
    if problem is None and not ckpt["iteration"] >= 0:
        problem = f"its iteration {ckpt['iteration']} is negative"
    problem = problem or _count_problem(ckpt, shape)
    if problem:
        raise TrainingError(f"--resume: {path}: not a checkpoint the trainer wrote ({problem})")


def resume_config(cfg: TrainConfig, given: frozenset | None = None) -> TrainConfig:
    """The configuration of a resumed run: the checkpoint's, with only the flags of
    RESUME_MAY_CHANGE taken from this command; any other flag given with a value that
    differs from the run's is an error that names it. `given`: the options the command line
    gave, one equal to its default included; None: those that differ from the defaults.
    Every refusal here comes before the run starts, so it is ResumeRefused (bad input), its
    line unchanged."""
    try:
        return _resumed_config(cfg, given)
    except ResumeRefused:
        raise
    except TrainingError as exc:
        if is_out_of_memory(exc):  # the machine, not the checkpoint: the command says so itself
            raise
        raise ResumeRefused(str(exc)) from exc


def _resumed_config(cfg: TrainConfig, given: frozenset | None) -> TrainConfig:
    run_dir = Path(cfg.resume)
    ckpt = _resumable_checkpoint(run_dir)
    defaults = TrainConfig()
    merged = _merged_options(cfg, ckpt["train_config"], defaults, given)
    if cfg.log_dir != defaults.log_dir and Path(cfg.log_dir).resolve() != run_dir.resolve():
        raise TrainingError(f"--resume {run_dir} continues in its own directory; --log-dir {cfg.log_dir} differs")
    merged.update(log_dir=str(run_dir), resume=str(run_dir))
    out = TrainConfig(**merged)
    _check_recorded_model(run_dir, out.model, "model" in given if given is not None else cfg.model is not None)
    try:  # a saved value out of its range (a crafted checkpoint) is named with the run it came from
        out.validate()
        sac_config(out)
    except (TrainingError, InputError) as exc:
        raise TrainingError(f"--resume {run_dir}: the resumed run's options (its checkpoint's, with this "
                            f"command's): {exc}") from None
    done = int(ckpt["iteration"])
    if out.iterations <= done:
        raise TrainingError(f"--resume {run_dir}: its checkpoint is at iteration {done}; "
                            f"give --iterations larger than that (the new total), got {out.iterations}")
    _check_same_model(out.model, ckpt.get("model_sha256"))
    ranks = _resumed_ranks(checkpoint_path(run_dir), ckpt, out)
    _check_total_steps(checkpoint_path(run_dir), ckpt, out.num_envs)
    sac = sac_config(out)
    _check_learner_state(checkpoint_path(run_dir), ckpt, out)
    if problem := policy_problem(ckpt["learner_state"], sac, first_observations(out.model, out.tilt_obs)):
        raise BadCheckpoint(f"--resume: {checkpoint_path(run_dir)}: cannot be resumed ({problem})")
    streams: dict[Path, torch.Tensor] = {}
    for rank in range(ranks):  # the ranks the resumed run starts, each of which reads its own state
        part = resume_rank_state_path(run_dir, rank, done)
        if not part.is_file():
            kind = file_kind(part)
            raise TrainingError(f"--resume {run_dir}: {part} is " + (f"{kind}, not a file" if kind else "missing"))
        # mapped, not read: a rank state with its replay buffer can be GBs, and the rank reads it again
        mine = read_checkpoint(part, mmap=True)
        _check_rank_state(run_dir, part, rank, mine, ckpt, out, sac)
        _check_own_stream(part, mine["learner"]["rng"], streams)
    return out


def _check_own_stream(part: Path, rng: torch.Tensor, streams: dict[Path, torch.Tensor]) -> None:
    """Each rank's generator is seeded apart, so two rank states holding one random state are
    one rank's copied over another's: both ranks would draw the same batches."""
    if same := next((other for other, seen in streams.items() if torch.equal(seen, rng)), None):
        raise _not_written(part, f"its learner.rng is the random state {same} holds; every rank draws a "
                                 "stream of its own, so one of the two is the other's copy")
    streams[part] = rng


def _check_learner_state(path: Path, ckpt: dict, cfg: TrainConfig) -> None:
    """BadCheckpoint naming final.pt (at `path`) when its observation statistics are not ones
    the learner makes from the rows its ranks have collected."""
    rows = int(ckpt["iteration"]) * cfg.num_envs * int(ckpt["world_size"])
    if problem := normaliser_problem(ckpt["learner_state"], rows, sac_config(cfg)):
        raise _not_written(path, problem)


def _resumed_ranks(path: Path, ckpt: dict, cfg: TrainConfig) -> int:
    """The resumed run's rank count (its saved devices, or an external launcher's WORLD_SIZE);
    BadCheckpoint naming final.pt when its world_size is another."""
    external, world_size = launcher_env()
    ranks = world_size if external else len(cfg.device_list())
    if ckpt["world_size"] != ranks and external:  # a genuine run resumed under another launch: its ranks' states
        raise TrainingError(f"--resume: {path}: saved by {ckpt['world_size']} rank(s), resumed under the "
                            f"launcher's WORLD_SIZE {ranks}: a run resumes with the ranks it trained with")
    if ckpt["world_size"] != ranks:
        raise _not_written(path, f"its world_size {ckpt['world_size']} is not the {ranks} rank(s) of its devices "
                                 f"{cfg.devices}")
    return ranks


def _check_total_steps(path: Path, ckpt: dict, num_envs: int) -> None:
    """BadCheckpoint naming final.pt when its total_env_steps is not what its iterations make:
    each of its ranks steps `num_envs` environments once an iteration."""
    total = int(ckpt["iteration"]) * num_envs * int(ckpt["world_size"])
    if ckpt["total_env_steps"] != total:
        raise _not_written(path, f"its total_env_steps {ckpt['total_env_steps']!r} is not the {total} of "
                                 f"{ckpt['iteration']} iterations of {num_envs} envs on {ckpt['world_size']} rank(s)")


def _on_cuda(cfg: TrainConfig) -> bool:
    """Whether the run's ranks are CUDA ones (--devices mixes none), without initialising CUDA."""
    return torch.device(cfg.device_list()[0]).type == "cuda"


def _check_rank_state(run_dir: Path, part: Path, rank: int, mine: dict, shared: dict, cfg: TrainConfig,
                      sac) -> None:
    """TrainingError (BadCheckpoint for its counts and learner part) naming `part`, rank `rank`'s
    state, when it is not the state the trainer writes beside `shared` (final.pt) for the run
    `cfg`, whose learner has the settings `sac`."""
    _check_shape(part, mine, RANK_SHAPE)
    if mine.get("rank", rank) != rank:  # another rank's file copied over this one's: its random stream, its replay
        raise BadCheckpoint(f"--resume: {part}: holds rank {str(mine['rank'])[:20]}'s state, not rank {rank}'s")
    if int(mine["iteration"]) != int(shared["iteration"]):
        raise TrainingError(f"--resume {run_dir}: rank {rank}'s state is from iteration {mine['iteration']}, "
                            f"the checkpoint from {shared['iteration']} ({_why_apart(mine, shared)}); "
                            "nothing consistent to resume")
    done = int(shared["iteration"])
    if problem := (rank_counts_problem(mine, done, cfg.num_envs)
                   or learner_problem(mine["learner"], sac, cfg.num_envs, done, _on_cuda(cfg))
                   or optimizer_steps_problem(shared["optimizers"], mine["learner"]["iterations"], sac)):
        raise _not_written(part, problem)


def _why_apart(mine: dict, shared: dict) -> str:
    """What can have left a rank state and final.pt at other iterations: a stop between the two
    writes leaves them at most one checkpoint interval apart (ranks are not in step), and an
    older trainer's rank state may be ahead of its final.pt by as much."""
    every = shared["train_config"].get("checkpoint_every")
    gap = abs(int(mine["iteration"]) - int(shared["iteration"]))
    if not isinstance(every, int) or every <= 0 or gap <= every:  # 0: saved at the end and at a stop only
        return "a stop between the two writes"
    return f"more than the checkpoint interval of {every} apart: they are not of one checkpoint"


def _resumable_checkpoint(run_dir: Path) -> dict:
    """The run's final.pt, which must hold the learning state (not a policy-only copy, nor
    a pipeline run whose policy was moved out too: the way to resume it is named)."""
    if not os.path.lexists(checkpoint_path(run_dir)) and _recorded_home(run_dir):
        raise TrainingError(f"--resume {run_dir}: it has no checkpoints/final.pt (a pipeline run's: its policy was "
                            f"left out of the set and its learning state moved){_recipe(run_dir)}")
    ckpt = read_checkpoint(checkpoint_path(run_dir))
    version = ckpt.get("version", 1)
    if ckpt["format"] != CHECKPOINT_FORMAT[0] or not isinstance(version, int) or version < 2:
        raise TrainingError(f"--resume {run_dir}: its checkpoint (format version {version!r}) holds the "
                            "policy only, not the learning state; it cannot be resumed")
    if "policy_only_of" in ckpt or "learner_state" not in ckpt:
        raise TrainingError(f"--resume {run_dir}: its checkpoint is a policy-only copy (a pipeline run's: its learning "
                            f"state was moved to {_learning_state_home(run_dir)}){_recipe(run_dir)}")
    _check_final(checkpoint_path(run_dir), ckpt)
    return ckpt


def _check_final(path: Path, ckpt: dict) -> None:
    """final.pt's fields and the tensors of its learning state held to what the trainer writes."""
    _check_shape(path, ckpt, FINAL_SHAPE)
    _check_tensors(path, ckpt)


def _optimizers_shape_problem(optimizers: dict) -> str | None:
    """What makes `optimizers` other than the learner's AdamW states as saved ({network: {} before
    the first step, else {0: {moment: tensor}}}: one flat parameter each), or None; a list or a
    mapping of another shape ended in an AttributeError naming no file."""
    for name, state in optimizers.items():
        where = f"optimizers.{str(name)[:40]}"
        if name not in OPTIMIZERS:
            return f"{where}: no optimizer of the learner (it has {', '.join(OPTIMIZERS)})"
        if not isinstance(state, dict) or set(state) - {0}:
            return f"{where} is not an optimizer's state of one parameter"
        moments = state.get(0, {})
        if not isinstance(moments, dict) or (moments and set(moments) != set(ADAMW_MOMENTS)):
            return f"{where}.0 is not AdamW's state ({', '.join(ADAMW_MOMENTS)})"
    missing = [name for name in OPTIMIZERS if name not in optimizers]
    return f"optimizers.{missing[0]} is missing (the learner has {', '.join(OPTIMIZERS)})" if missing else None


def _steps_problem(optimizers: dict) -> str | None:
    """An AdamW step count (a float32 tensor, finite) that is not one whole number >= 0: a negative
    one ended in a ZeroDivisionError (AdamW's bias correction) once the run had started."""
    for name, state in optimizers.items():
        step = state.get(0, {}).get("step")
        if step is None:
            continue
        if step.dim() != 0:
            return f"optimizers.{name}.0.step holds {step.numel()} values, not one count of steps"
        if not (step.item() >= 0 and step.item() == int(step.item())):
            return f"optimizers.{name}.0.step {step.item()!r} is not a count of steps (a whole number >= 0)"
    return None


def _log_alpha_problem(learner_state: dict) -> str | None:
    log_alpha = learner_state.get("log_alpha")
    if log_alpha is not None and bool((log_alpha > LOG_ALPHA_MAX).any()):
        return (f"learner_state.log_alpha {log_alpha.max().item():g}: alpha = exp(log_alpha) is not finite in "
                f"float32 (log_alpha at most {LOG_ALPHA_MAX:.2f}); its first update would diverge")
    return None


def _check_tensors(path: Path, ckpt: dict) -> None:
    """BadCheckpoint naming `path` and the field when a tensor of the learning state is not
    what the trainer writes: a meta or sparse one ended in torch's copy error once the run
    had started, a NaN one was resumed and reported as divergence, an int one trained on."""
    def dtype(name) -> torch.dtype:
        return getattr(torch, state_tensor_dtype(str(name)))

    def shape(name) -> tuple:  # a row count is one number; every other state tensor a flat run of values
        return () if str(name).endswith("_count") else (None,)

    problem = state_names_problem(ckpt["learner_state"]) or next(
        (p for name, value in ckpt["learner_state"].items()
         if (p := tensor_problem(value, f"learner_state.{name}", dtype(name), shape(name)))), None)
    problem = problem or _log_alpha_problem(ckpt["learner_state"])
    if problem:
        raise _not_written(path, problem)
    problem = _optimizers_shape_problem(ckpt["optimizers"]) or \
        tree_problem(ckpt["optimizers"], "optimizers", lambda _: getattr(torch, OPTIMIZER_DTYPE))
    if problem and problem.endswith("NaN or inf"):
        # the trainer's divergence check watches the learner's tensors, not the optimizers' moments:
        # a run may have written these on its way to diverging
        raise BadCheckpoint(f"--resume: {path}: cannot be resumed ({problem}: a run that was diverging, or an "
                            "edited file)")
    problem = problem or _steps_problem(ckpt["optimizers"])
    if problem:
        raise _not_written(path, problem)


def _recorded_home(run_dir: Path) -> str | None:
    """Where the pipeline moved a run's learning state, as its run.json says
    (`learning_state.moved_to`, relative to the folder the pipeline ran in), or None."""
    try:
        moved_to = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))["learning_state"]["moved_to"]
    except (OSError, ValueError, KeyError, TypeError):
        moved_to = None
    return moved_to if isinstance(moved_to, str) and moved_to.isprintable() else None


def _learning_state_home(run_dir: Path) -> str:
    return _recorded_home(run_dir) or "logs/<run set>/learning_state/<run>"


def _recipe(run_dir: Path) -> str:
    state = _learning_state_home(run_dir)
    return (f"; to resume it, copy {run_dir} to a folder of your own, copy {state}/checkpoints/* into the copy's "
            "checkpoints/ (replacing any final.pt) and resume the copy")


def _merged_options(cfg: TrainConfig, saved_config: dict, defaults: TrainConfig,
                    given_options: frozenset | None = None) -> dict:
    """The saved run's options, with the ones this command gives (where allowed);
    `given_options` as resume_config takes it."""
    known = {f.name for f in fields(TrainConfig)}
    saved = TrainConfig(**{k: v for k, v in saved_config.items() if k in known})
    merged = {}
    for f in fields(TrainConfig):
        given, before = getattr(cfg, f.name), getattr(saved, f.name)
        if f.name not in given_options if given_options is not None else given == getattr(defaults, f.name):
            merged[f.name] = before  # not given: the run's own value
        elif f.name in RESUME_MAY_CHANGE or given == before:
            merged[f.name] = given
        else:
            raise TrainingError(f"--resume: {_spelled(f.name, given)} differs from the resumed run's "
                                f"{_spelled(f.name, before) if isinstance(before, bool) else before}; a resumed run "
                                "keeps what it learns with")
    return merged


def _spelled(name: str, value) -> str:
    """An option as the command line gives it (a flag's false as --no-x)."""
    flag = name.replace("_", "-")
    if isinstance(value, bool):
        return f"--{flag}" if value else f"--no-{flag}"
    return f"--{flag} {value}"


def _check_recorded_model(run_dir: Path, model: str | None, given: bool) -> None:
    """A model path the run recorded relative to the folder it was started from names no file
    from another folder: said so, with the way to resume it, not as a missing file."""
    if model is None or given or Path(model).is_absolute() or Path(model).is_file():
        return
    raise TrainingError(f"--resume {run_dir}: the run's --model {model} is a relative path, recorded as given in the "
                        f"folder the run was started from; from here ({os.getcwd()}) it names no file. Give "
                        "--model PATH (that model file, as reached from here) again to resume it")


def _check_same_model(model: str | None, trained_sha256: str | None) -> None:
    if model and trained_sha256 and Path(model).is_file() and sha256_file(model) != trained_sha256:
        raise TrainingError(f"--model {model} is not the model the run trained on "
                            f"(sha256 {trained_sha256[:12]}...)")


def load_resume_state(cfg: TrainConfig, learner, rank: int):
    """Put the checkpoint's learning state into `learner`; returns (iteration, env steps,
    curriculum) of this rank."""
    shared = read_checkpoint(checkpoint_path(cfg.log_dir))
    # judged before the run started (resume_config); again here, should a file have changed since
    _check_final(checkpoint_path(cfg.log_dir), shared)
    _check_learner_state(checkpoint_path(cfg.log_dir), shared, cfg)
    part = resume_rank_state_path(cfg.log_dir, rank, int(shared["iteration"]))
    mine = read_checkpoint(part)
    _check_rank_state(Path(cfg.log_dir), part, rank, mine, shared, cfg, sac_config(cfg))
    try:
        learner.load_learning_state({**mine["learner"], "tensors": shared["learner_state"],
                                     "optimizers": shared["optimizers"]})
    except RandomStateRefused as exc:
        raise TrainingError(f"--resume: {part}: not a checkpoint the trainer "
                            f"wrote ({exc})") from None
    except ValueError as exc:
        raise TrainingError(f"--resume {cfg.log_dir}: {exc}") from exc
    if rank == 0:
        _say_resuming(cfg, learner, shared, saved_replay=mine["learner"].get("replay") is not None)
    curriculum = tuple(mine["curriculum"]) if mine.get("curriculum") else None
    return int(shared["iteration"]), int(mine["env_steps"]), curriculum


def _say_resuming(cfg: TrainConfig, learner, shared: dict, saved_replay: bool) -> None:
    refill = "" if saved_replay else (
        f"; its replay buffer was not saved (--checkpoint-replay): learning waits until "
        f"{learner.learning_starts} new rows are in ({-(-learner.learning_starts // learner.num_envs)} iterations)")
    print(f"sacscale train: resuming {cfg.log_dir} at iteration {shared['iteration']} "
          f"({int(shared['total_env_steps']):,} env steps){refill}", file=sys.stderr, flush=True)
