"""Checkpoints: what a rank saves after an iteration (checkpoints/rank{r}.pt and rank 0's
checkpoints/final.pt), reading them back, and the policy-only copy the pipeline keeps."""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch

from sacscale.atomic import atomic_write_bytes, file_kind
from sacscale.checks import checkpoint_problem
from sacscale.hashes import sha256_file
from sacscale.saved_tensors import load_weights
from sacscale.train.config import TrainConfig, TrainingError

CHECKPOINT_FORMAT = ("sacscale-checkpoint", 2)
RANK_STATE_FORMAT = ("sacscale-rank-state", 1)
# What a policy-only copy of final.pt leaves out: the learning state a resume needs
# (networks' other halves, targets, optimiser moments), most of the file's size.
LEARNING_STATE_KEYS = ("learner_state", "optimizers")
# The parts of the learner's learning state that differ between ranks (rank{r}.pt).
RANK_LEARNER_KEYS = ("rng", "iterations", "replay", "fresh", "fresh_pending")


def checkpoint_path(log_dir: str | Path) -> Path:
    return Path(log_dir) / "checkpoints" / "final.pt"


def rank_state_path(log_dir: str | Path, rank: int) -> Path:
    return Path(log_dir) / "checkpoints" / f"rank{rank}.pt"


def pending_rank_state_path(log_dir: str | Path, rank: int, iteration: int) -> Path:
    """Where a rank writes its state at `iteration`: beside the rank{r}.pt that the current
    final.pt goes with, which it replaces only once the final.pt of `iteration` is in place."""
    return Path(log_dir) / "checkpoints" / f"rank{rank}.it{iteration}.pt"


def resume_rank_state_path(log_dir: str | Path, rank: int, iteration: int) -> Path:
    """The rank state that goes with a final.pt of `iteration`: the one written under that
    iteration's name where a stop came before it was moved into place, else rank{r}.pt."""
    pending = pending_rank_state_path(log_dir, rank, iteration)
    return pending if os.path.lexists(pending) else rank_state_path(log_dir, rank)


_PENDING = re.compile(r"rank(\d+)\.it(\d+)\.pt")


def _settle_rank_states(folder: Path, iteration: int, rank: int | None = None) -> None:
    """After final.pt of `iteration` is in place: each rank's state of that iteration (of rank
    `rank` only, where given) becomes its rank{r}.pt; older ones, and rank 0's from an
    interrupted sitting, go. A later state of another rank stays: ranks are not in step, it
    goes with the next final.pt."""
    for entry in os.scandir(folder):
        match = _PENDING.fullmatch(entry.name)
        if match is None or not entry.is_file(follow_symlinks=False) or rank not in (None, int(match[1])):
            continue
        owner, at = int(match[1]), int(match[2])
        try:  # rank 0 and the rank itself may both move it: the second finds it gone
            if at == iteration:
                os.replace(entry.path, rank_state_path(folder.parent, owner))
            elif at < iteration or owner == 0:
                os.unlink(entry.path)
        except FileNotFoundError:
            pass


def _final_iteration(path: Path) -> int | None:
    """The iteration of the final.pt at `path` (mapped, its tensors not read), or None."""
    try:
        return int(load_weights(path, mmap=True)["iteration"])
    except Exception:  # noqa: BLE001 - none yet, or being replaced: rank 0 settles this rank's state then
        return None


def _save_atomic(obj, path: Path) -> None:
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

    Both name the iteration, so a resume can tell a torn pair. The rank state is written as
    rank{r}.it{N}.pt and moved over rank{r}.pt only once final.pt of N is in place, so a stop
    at any point leaves a pair that belongs together (the previous or this one)."""
    state = learner.learning_state(with_replay=cfg.checkpoint_replay)
    _save_atomic({
        "format": RANK_STATE_FORMAT[0], "version": RANK_STATE_FORMAT[1], "rank": rank,
        "iteration": int(iteration), "env_steps": int(rank_steps),
        "curriculum": None if curriculum is None else [float(v) for v in curriculum],
        "learner": {k: state[k] for k in RANK_LEARNER_KEYS if k in state},
    }, pending_rank_state_path(cfg.log_dir, rank, iteration))
    path = checkpoint_path(cfg.log_dir)
    if rank != 0:  # rank 0 wrote final.pt of this iteration first: its settling came before this state
        if _final_iteration(path) == int(iteration):
            _settle_rank_states(path.parent, int(iteration), rank)
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
    _settle_rank_states(path.parent, int(iteration))
    return path


def write_policy_only(full: Path, out: Path) -> dict:
    """A copy of checkpoint `full` without its learning state, at `out`: what `sacscale
    evaluate` and `render` read (the published actor, its config, the counters). The copy
    names the full file (`policy_only_of`: SHA-256 and size). Returns that entry."""
    data = full.read_bytes()  # read once: hashed and loaded from the same bytes
    ckpt = load_weights(io.BytesIO(data))
    if not isinstance(ckpt, dict) or ckpt.get("format") != CHECKPOINT_FORMAT[0]:
        raise ValueError(f"{full}: not a {CHECKPOINT_FORMAT[0]} file")
    source = {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}
    _save_atomic({k: v for k, v in ckpt.items() if k not in LEARNING_STATE_KEYS} | {"policy_only_of": source}, out)
    return source


def read_checkpoint(path: str | Path, mmap: bool = False) -> dict:
    """The checkpoint at `path`, judged unread first; with `mmap` its tensors are mapped from
    the file, not read into memory (a rank state with its replay buffer can be GBs)."""
    path = Path(path)
    if not path.is_file():
        kind = file_kind(path)  # a FIFO or a folder is there, not missing
        raise TrainingError(f"{path}: " + (f"{kind}, not a regular file" if kind else "no checkpoint there"))
    problem = checkpoint_problem(path)
    if problem:
        raise TrainingError(f"{path}: {problem}")
    try:
        ckpt = load_weights(path, mmap=mmap)
    except Exception as exc:  # noqa: BLE001 - a truncated or foreign file
        raise TrainingError(f"{path}: not a readable checkpoint ({type(exc).__name__}: {exc})") from exc
    if not isinstance(ckpt, dict) or ckpt.get("format") not in (CHECKPOINT_FORMAT[0], RANK_STATE_FORMAT[0]):
        raise TrainingError(f"{path}: not a sacscale checkpoint")
    return ckpt
