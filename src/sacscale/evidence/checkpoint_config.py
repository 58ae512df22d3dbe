"""A run's records against the settings its policy checkpoint holds.

The trainer writes `train_config` (its whole TrainConfig) into `checkpoints/final.pt`, a
hashed file no record is written from. The records (plan.json, environment.json, run.json
and train_meta.json `config`) are checked against each other and the run's command, so a
setting moved consistently in all of them would pass; train_meta.json `config` is compared
here with the checkpoint's copy, field by field, which binds them all to the trainer's own
output. Where the set leaves the policy out by design (evidence.json lists it with its
hash), there is nothing to compare, and a note says so."""

from __future__ import annotations

from pathlib import Path

from sacscale.evidence.result import same_value
from sacscale.evidence.scope import POLICY

# what the run was: its seed, its learner and collector settings (`extra`: the learner's own,
# gamma, learning rates, sizes), its CPU pools, its compilation, its length and devices (log
# paths, logging and time limits are where and how it ran, compared elsewhere or not at all).
# `model` is the path as the trainer got it: the checkpoint and train_meta.json are written by
# one trainer process from one TrainConfig where the run ran, so they hold the same string on
# any machine, and where the set lies now does not enter (the file itself is bound by its
# hash, records._model_hash)
COMPARED = ("seed", "batch_size", "num_envs", "devices", "iterations", "num_critic_updates", "num_actor_updates",
            "replay_per_env", "tilt_obs", "obs_norm", "env_pipeline", "grad_sync", "allreduce", "sim_threads",
            "collector_cpu_ids", "learner_cpu_ids", "compile", "cuda_graph", "checkpoint_replay", "model", "extra")


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _checkpoint_config(path: Path) -> tuple[dict | None, str | None]:
    """(the checkpoint's train_config, a problem reading it)."""
    # torch: loaded only here, for sets that keep a policy (weights only, size-checked first)
    from sacscale.train.checkpoint import read_checkpoint
    from sacscale.train.config import TrainingError, saved_option_problem

    try:
        ckpt = read_checkpoint(path)
    except TrainingError as exc:
        return None, str(exc)
    config = ckpt.get("train_config")
    if not isinstance(config, dict):
        return None, None  # a checkpoint format without it: nothing to compare
    # a value the trainer never writes (a tensor, an object where a number goes) is named, and
    # never compared: a tensor's comparison raised, and the whole verification stopped with it
    kinds = [problem for key in COMPARED if key in config and (problem := saved_option_problem(key, config[key]))]
    if kinds:
        return None, f"{'; '.join(kinds)}: a type the trainer never writes there"
    return config, None


def checkpoint_config_findings(root: Path, name: str, meta_config: dict, left_out: dict[str, str],
                               reference: bool, made_here: bool = False) -> tuple[list[str], list[str]]:
    """(problems, notes): train_meta.json config.* against checkpoints/final.pt train_config.*.
    In a set made by this code (`made_here`) the checkpoint holds every compared field, as
    the trainer writes it: one stripped of them, the manifest made again, passed as a note."""
    rel = f"runs/{name}/{POLICY.as_posix()}"
    if reference or not meta_config:  # the reference trainer writes its own checkpoints
        return [], []
    path = root / "runs" / name / POLICY
    if rel in left_out:
        return [], [f"{name}: {rel} is left out of the set by design (evidence.json lists its hash): "
                    "the settings it holds (train_config) are not compared with the records"]
    if not path.is_file():
        return [], []  # a missing hashed file is the manifest's to name
    config, problem = _checkpoint_config(path)
    if problem:
        return [f"{name}: {rel}: {problem}"], []
    if config is None:
        line = f"{name}: {rel} holds no train_config: the records' settings are not compared with it"
        return ([f"{line}, though the trainer writes it into every checkpoint"], []) if made_here else ([], [line])
    missing = [key for key in COMPARED if key in meta_config and key not in config] if made_here else []
    if missing:
        return [f"{name}: {rel}'s train_config lacks {', '.join(missing)}, which the trainer writes: the records' "
                "settings rest on nothing there"], []
    # compared as JSON values, kinds included (an `extra` of {"gamma": 1} is not {"gamma": 1.0},
    # whatever the spacing or key order of the text it was given as)
    return [f"{name}: train_meta.json config.{key} {_shown(meta_config[key])} (as the other records), but the "
            f"run's hashed {POLICY.as_posix()} holds train_config.{key} {_shown(config[key])}"
            for key in COMPARED if key in config and key in meta_config
            and not same_value(config[key], meta_config[key])], []
