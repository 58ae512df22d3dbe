"""`sacscale train`: every TrainConfig field is a flag (`--num-envs 2048`, `--no-compile`)."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import MISSING, fields

from sacscale.train import TrainConfig, TrainingError, run_training

HELP = {
    "devices": "comma list: 'cpu' (one CPU rank), 'cpu,cpu' (2 gloo ranks), '0' or '0,1' (CUDA indices); "
               "'0,0': two ranks sharing GPU 0 (gloo, with --allreduce between-graphs)",
    "num_envs": "environments per rank",
    "batch_size": "learner batch per rank",
    "num_critic_updates": "critic updates per iteration, each on its own batch and followed by an "
                          "entropy-temperature step and the target networks' Polyak update",
    "num_actor_updates": "actor updates per iteration, spread evenly over the critic updates (8 and 2: with "
                         "critic updates 0 and 4); 0 .. --num-critic-updates",
    "iterations": "iterations (one env step of all envs + one learner iteration each)",
    "collector_cpu_ids": "'auto', a CPU list for one rank ('8-39'), or one list per rank ('8-39;48-79')",
    "learner_cpu_ids": "pin each rank's learner process (all its threads) after its first update: "
                       "'auto' (the CPUs no pool uses, split per rank) or one list per rank ('0;16'); "
                       "empty keeps the affinity",
    "sim_threads": "simulation threads per rank (0: size of the rank's CPU pool)",
    "env_pipeline": "halves: the envs step as two halves that take turns on the pool, so the task and "
                    "actor work of one overlaps the other's physics; serial: one batch, physics then the rest",
    "tilt_obs": "the task's tilt input: world (the reference's: minus the torso z-axis in the world frame, "
                "heading-dependent) or torso (gravity in the torso IMU frame)",
    "seed": "random seed: the networks' initialisation and, offset by 1000 x rank, each rank's environments",
    "obs_norm": "normalise the actor's and the critics' inputs by running mean and variance over all "
                "ranks' replay rows (off: the reference's SAC, the scaling matrix's default)",
    "log_dir": "run directory: TensorBoard events under LOG_DIR/tb/rank*/, train_meta.json",
    "log_every": "write TensorBoard scalars every K iterations",
    "checkpoint_every": "write the checkpoint (LOG_DIR/checkpoints/final.pt, the policy and shared learning state, "
                        "and rank*.pt) every K iterations (0: only at the end); a stopped one-rank run saves its last "
                        "completed iteration, several ranks keep the last periodic one",
    "checkpoint_replay": "checkpoints also hold each rank's replay buffer (about 1.8 GB per rank at 2048 envs); "
                         "without it a resumed run refills the buffer before it learns again",
    "resume": "continue the run in this directory from its last checkpoint (same directory, counters and "
              "TensorBoard steps continue); --iterations is the new total; flags that change what is learned "
              "must be left out or equal the run's",
    "trace": "log per-phase times (collector and learner)",
    "compile": "torch.compile the losses (CUDA only)",
    "cuda_graph": "capture the whole iteration in one CUDA graph (CUDA only)",
    "grad_sync": "auto: all-reduce hooks when more than one rank; on: always (world size 1 too); off",
    "allreduce": "in-graph: the gradient all-reduce is captured in the iteration's CUDA graph; between-graphs: "
                 "the iteration is captured as segments split at each all-reduce, which runs eagerly between "
                 "their replays (every other kernel the same: measures what capturing it gains; CUDA only)",
    "model": "compiled G1 model (.mjb); default: build it from the asset package",
    "timeout_s": "longest wait for a collector step or a peer rank before failing",
    "min_free_mb": "free disk space needed under LOG_DIR at start (checked before anything runs)",
    "replay_per_env": "replay capacity in rows per environment",
    "extra": "JSON object of further learner settings (SACConfig fields), e.g. '{\"gamma\": 0.99}'",
}


def _choices() -> dict[str, tuple[str, ...]]:
    """The string options with a fixed set of values, listed in --help and checked by the
    parser (a wrong value is a usage error, exit 2)."""
    from sacscale.task.g1_walk_flat import TILT_OBS
    from sacscale.task.halves import PIPELINES
    from sacscale.train import ALLREDUCE_PLACEMENTS

    return {"env_pipeline": PIPELINES, "tilt_obs": TILT_OBS, "allreduce": ALLREDUCE_PLACEMENTS,
            "grad_sync": ("auto", "on", "off")}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    choices = _choices()
    for f in fields(TrainConfig):
        flag = "--" + f.name.replace("_", "-")
        default = f.default if f.default is not MISSING else f.default_factory()  # type: ignore[misc]
        if f.type in ("bool", bool):
            parser.add_argument(flag, dest=f.name, action=argparse.BooleanOptionalAction, default=default,
                                help=HELP.get(f.name))
        elif f.name == "extra":
            parser.add_argument(flag, dest=f.name, type=json.loads, default={}, help=HELP[f.name])
        else:
            kind = {"int": int, "float": float}.get(str(f.type), str)
            parser.add_argument(flag, dest=f.name, type=kind, default=default, choices=choices.get(f.name),
                                help=f"{HELP[f.name]} (default: {default})")


def build_parser() -> argparse.ArgumentParser:
    """The trainer's own parser. No abbreviations: `--see 99` must not silently mean `--seed`
    (the pipeline records what it passed; an abbreviation would run something else)."""
    parser = argparse.ArgumentParser(prog="sacscale train", allow_abbrev=False)
    add_arguments(parser)
    return parser


def option_names() -> dict[str, str]:
    """`{option string: TrainConfig field}` for every trainer option (`--no-x` included):
    what the pipeline checks its overrides against."""
    return {opt: action.dest for action in build_parser()._actions for opt in action.option_strings
            if action.dest != "help"}


def check_options(cfg: TrainConfig) -> None:
    """The checks of the options' values alone, a failure being a usage error (exit 2).
    run_training repeats them and then checks the machine and the file system (CUDA
    devices, the log directory, disk and shared memory): failures there exit 1. With
    --resume the run's own options are checked after they are read from its checkpoint,
    in run_training."""
    if cfg.resume:
        return
    from sacscale import checks
    from sacscale.parallel.pools import PoolError, resolve_learner_cpus, resolve_pools
    from sacscale.train import sac_config

    try:
        cfg.validate()
        checks.check_sizes(cfg, sac_config(cfg))
        plan = resolve_pools(cfg.collector_cpu_ids, len(cfg.device_list()))
        resolve_learner_cpus(cfg.learner_cpu_ids, plan.pools)
        checks.check_model(cfg.model)  # a given --model file loads and is the task's (about 15 ms)
    except (PoolError, checks.InputError) as exc:
        raise TrainingError(str(exc)) from exc


def run(args: argparse.Namespace) -> int:
    """0: completed; 1: failed (the message names the cause); 2: a usage error (a bad option
    value); 128+N: stopped by signal N."""
    from sacscale.parallel.launch import Interrupted

    cfg = TrainConfig(**{f.name: getattr(args, f.name) for f in fields(TrainConfig)})
    try:
        check_options(cfg)
    except TrainingError as exc:
        print(f"sacscale train: error: {exc}", file=sys.stderr)
        return 2
    try:
        run_training(cfg)
    except (TrainingError, RuntimeError, ValueError) as exc:
        print(f"sacscale train: error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:  # e.g. the disk filled up during the run (event files, checkpoints)
        import errno

        full = " (disk full)" if exc.errno in (errno.ENOSPC, errno.EDQUOT) else ""
        where = f" {exc.filename}" if exc.filename else ""
        print(f"sacscale train: error: writing under --log-dir {cfg.log_dir} failed{full}:{where} "
              f"{exc.strerror or exc}", file=sys.stderr)
        return 1
    except Interrupted as exc:
        print(f"sacscale train: {exc}; stopped (event files so far are kept)", file=sys.stderr)
        return 128 + exc.signum
    except KeyboardInterrupt:
        print("sacscale train: interrupted by SIGINT; stopped (event files so far are kept)", file=sys.stderr)
        return 130
    return 0
