"""The trainer's options: every TrainConfig field is a flag (`--num-envs 2048`, `--no-compile`).
Defined here, below the command line, so that the pipeline and the verifier check a run's
options with the parser the trainer itself uses."""

from __future__ import annotations

import argparse
import functools
from dataclasses import MISSING, fields

from sacscale.reading import NestedTooDeep, loads_record
from sacscale.task.walk_rules import PIPELINES, TILT_OBS
from sacscale.train.config import ALLREDUCE_PLACEMENTS, TrainConfig

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
    "extra": "JSON object of further learner settings (SACConfig fields), e.g. '{\"gamma\": 0.99}'; not the "
             "task's sizes (action_dim, actor_obs_dim, critic_obs_dim: the model fixes them) nor a setting with "
             "its own option (batch_size, replay_per_env, critic_updates, actor_update_at, obs_norm: give "
             "--batch-size, --replay-per-env, --num-critic-updates, --num-actor-updates, --obs-norm)",
}


def _choices() -> dict[str, tuple[str, ...]]:
    """The string options with a fixed set of values, listed in --help and checked by the
    parser (a wrong value is a usage error, exit 2)."""
    return {"env_pipeline": PIPELINES, "tilt_obs": TILT_OBS, "allreduce": ALLREDUCE_PLACEMENTS,
            "grad_sync": ("auto", "on", "off")}


# settings are a flat object of numbers and names; a few levels leave room for lists
EXTRA_DEPTH = 8


def json_setting(text: str):
    """--extra's JSON, read as the project's records are: JSON nested past Python's recursion
    limit (`[[[...]]]`) raised a RecursionError traceback from inside argparse; a key given
    twice kept the last value without a word. Both are a bad value of the option (exit 2)."""
    try:
        value = loads_record(text)
    except NestedTooDeep:  # how deep that is depends on the Python build: the bound below is ours
        raise argparse.ArgumentTypeError(f"JSON nested too deep (more than {EXTRA_DEPTH} levels)") from None
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not valid JSON ({exc})") from None
    if _depth(value) > EXTRA_DEPTH:
        raise argparse.ArgumentTypeError(f"JSON nested too deep (more than {EXTRA_DEPTH} levels)")
    return value


def _depth(value) -> int:
    """Levels of nested lists and objects, counted without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (list, dict)):
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


# The parsed namespace's set of the options the command line gave: a resumed run must tell
# `--no-obs-norm` given from left out, both of which parse to the default.
GIVEN = "given_options"


def _note_given(namespace: argparse.Namespace, dest: str) -> None:
    setattr(namespace, GIVEN, getattr(namespace, GIVEN, frozenset()) | {dest})


class _Store(argparse.Action):
    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, values)
        _note_given(namespace, self.dest)


class _Flag(argparse.BooleanOptionalAction):
    def __call__(self, parser, namespace, values, option_string=None):
        super().__call__(parser, namespace, values, option_string)
        _note_given(namespace, self.dest)


def add_arguments(parser: argparse.ArgumentParser, note_given: bool = False) -> None:
    """The trainer's options; `note_given`: the parsed namespace also holds GIVEN (the CLI's
    own parse only: those who read a recorded command take vars() of it as a TrainConfig)."""
    choices = _choices()
    store, flag_action = (_Store, _Flag) if note_given else ("store", argparse.BooleanOptionalAction)
    for f in fields(TrainConfig):
        flag = "--" + f.name.replace("_", "-")
        default = f.default if f.default is not MISSING else f.default_factory()  # type: ignore[misc]
        if f.type in ("bool", bool):
            parser.add_argument(flag, dest=f.name, action=flag_action, default=default, help=HELP.get(f.name))
        elif f.name == "extra":
            parser.add_argument(flag, dest=f.name, action=store, type=json_setting, default={}, help=HELP[f.name])
        else:
            kind = {"int": int, "float": float}.get(str(f.type), str)
            parser.add_argument(flag, dest=f.name, action=store, type=kind, default=default,
                                choices=choices.get(f.name), help=f"{HELP[f.name]} (default: {default})")


def build_parser() -> argparse.ArgumentParser:
    """The trainer's own parser. No abbreviations: `--see 99` must not silently mean `--seed`
    (the pipeline records what it passed; an abbreviation would run something else)."""
    parser = argparse.ArgumentParser(prog="sacscale train", allow_abbrev=False)
    add_arguments(parser)
    return parser


@functools.cache
def option_actions() -> dict[str, argparse.Action]:
    """`{option string: its action}` for every trainer option (`--no-x` included), from one
    parser a process: planning asks it for each override of each run configuration."""
    return {opt: action for action in build_parser()._actions for opt in action.option_strings
            if action.dest != "help"}


def option_names() -> dict[str, str]:
    """`{option string: TrainConfig field}` for every trainer option (`--no-x` included):
    what the pipeline checks its overrides against."""
    return {opt: action.dest for opt, action in option_actions().items()}
