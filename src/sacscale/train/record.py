"""The run's record, LOG_DIR/train_meta.json: written at start (a resumed run appends its
sitting), its final status at the end, and the end-of-run check that synced ranks agree."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import sys
import time
from dataclasses import asdict
from pathlib import Path

import torch
import torch.distributed as dist

from sacscale.atomic import open_temporary, temporary_path
from sacscale.reading import loads_record
from sacscale.stopping import Interrupted
from sacscale.train.checkpoint import checkpoint_path, read_checkpoint
from sacscale.train.config import RanksApart, ResumeRefused, TrainConfig, TrainingError, compiles_losses

# Trailing blanks reserve room in train_meta.json, so the final status can still be
# written in place when the disk is full (a new file then cannot be made).
META_RESERVE = 2048


def meta_path(cfg: TrainConfig) -> Path:
    return Path(cfg.log_dir) / "train_meta.json"


def write_meta(cfg: TrainConfig, world_size: int, pool_plan: dict) -> None:
    """train_meta.json at start. A resumed run keeps the first sitting's record and appends
    this sitting to `sittings` (each with its configuration, start and starting iteration)."""
    path = meta_path(cfg)
    if cfg.resume and path.is_file():
        _add_sitting(cfg, path, pool_plan)
        return
    meta = {
        "config": asdict(cfg),
        "world_size": world_size,
        "devices": cfg.device_list(),
        "losses_compiled": compiles_losses(cfg),
        "collector_pools": pool_plan,
        "env_steps_accounting": "Perf/total_env_steps is written by rank 0 from an all-reduced sum of every rank's "
                                "cumulative env steps",
        "torch": torch.__version__,
        "python": sys.version.split()[0],
        "start_time": time.time(),
        "status": "running",
    }
    _claim(path, meta)


def _resumed_meta(path: Path) -> dict:
    """The resumed run's train_meta.json; one that cannot be read (malformed, nested too deep
    for Python) is named with its file, not only with the reader's complaint: bad input, read
    before this sitting writes anything."""
    try:
        meta = loads_record(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ResumeRefused(f"{path}: not a train_meta.json this trainer wrote ({exc})") from None
    if not isinstance(meta, dict):
        raise ResumeRefused(f"{path}: not a train_meta.json this trainer wrote (a JSON {type(meta).__name__})")
    return meta


def _add_sitting(cfg: TrainConfig, path: Path, pool_plan: dict) -> None:
    meta = _resumed_meta(path)
    sitting = {"config": asdict(cfg), "collector_pools": pool_plan, "start_time": time.time(),
               "from_iteration": int(read_checkpoint(checkpoint_path(cfg.log_dir))["iteration"]),
               "torch": torch.__version__, "previous_status": meta.get("status")}
    meta.setdefault("sittings", []).append(sitting)
    meta.update(status="running", config=asdict(cfg))
    meta.pop("end_time", None)
    meta.pop("error", None)
    atomic_json(path, meta)


def _claim(path: Path, meta: dict) -> None:
    """Create train_meta.json, only if no other run has (the log directory is this run's)."""
    created = [d for d in (path.parent, *path.parent.parents) if not d.exists()]
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_json(path, meta, exclusive=True)
    except BaseException:
        for d in created:  # the run did not start: leave no empty log directory behind
            try:
                d.rmdir()
            except OSError:
                break
        raise


def write_meta_status(cfg: TrainConfig, rank: int, status: str, steps: int, extra: dict | None = None) -> None:
    if rank != 0:
        return
    path = meta_path(cfg)
    meta = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    meta.update(status=status, end_time=time.time(), rank0_env_steps=steps, **(extra or {}))
    atomic_json(path, meta)


def mark_failed(cfg: TrainConfig, exc: BaseException) -> None:
    """The job failed: say so in train_meta.json, even if rank 0 had already written
    "completed" (another rank can fail after it), so the file agrees with the exit status."""
    path = meta_path(cfg)
    try:
        meta = json.loads(path.read_text(encoding="utf-8")) if path.exists() else None
    except (OSError, json.JSONDecodeError):
        meta = {}
    if meta is None:
        return
    status = "interrupted" if isinstance(exc, (Interrupted, KeyboardInterrupt)) else "failed"
    if meta.get("status") == "completed":
        meta["rank0_completed"] = True
    meta.update(status=status, error=f"{type(exc).__name__}: {exc}", end_time=time.time())
    try:
        atomic_json(path, meta)
    except TrainingError as write_exc:  # the job's own error is the one to report
        sys.stderr.write(f"sacscale train: {write_exc}\n")


def nonfinite_totals(learner, world_size: int, distributed: bool) -> dict:
    """train_meta.json's non-finite counters of this sitting: every rank's sum, and by rank."""
    mine = {**learner.nonfinite_counts(), "sources": learner.nonfinite_target_sources()}
    by_rank = [mine]
    if distributed and world_size > 1:
        by_rank = [None] * world_size
        dist.all_gather_object(by_rank, mine)
    return {"nonfinite_rows": sum(c["nonfinite_rows"] for c in by_rank),
            "nonfinite_targets": sum(c["nonfinite_targets"] for c in by_rank),
            "nonfinite_rows_by_rank": [c["nonfinite_rows"] for c in by_rank],
            "nonfinite_target_sources": {name: sum(c["sources"][name] for c in by_rank) for name in mine["sources"]}}


def learner_state_digest(learner) -> str:
    """SHA-256 over the bytes of the learner state every rank holds alike (networks,
    targets, log-alpha, normaliser), in name order."""
    return state_digest(learner.state_tensors())


def state_digest(tensors: dict) -> str:
    """`learner_state_digest` of a name -> tensor mapping (a checkpoint's `learner_state`
    holds the same tensors, so the verifier hashes a kept checkpoint with this)."""
    digest = hashlib.sha256()
    for name, tensor in sorted(tensors.items()):
        digest.update(name.encode())
        digest.update(tensor.detach().cpu().contiguous().view(-1).view(torch.uint8).numpy().tobytes())
    return digest.hexdigest()


def gather_state_digests(learner, world_size: int, distributed: bool) -> list[str]:
    """Every rank's `learner_state_digest`, in rank order (one all-gather)."""
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


def atomic_json(path: Path, data: dict, exclusive: bool = False) -> None:
    """Write `path` atomically (exclusive: only if it does not exist yet, so two runs
    started at once into one --log-dir cannot both claim it). A full disk is a
    TrainingError naming the file; no temporary file is left."""
    text = json.dumps(data, indent=2, default=str) + "\n" + " " * META_RESERVE + "\n"
    # per process and thread: rank 0, the launcher and a stop watchdog may all write
    tmp = None
    try:
        tmp = temporary_path(path)
        with open_temporary(tmp, "w") as fh:  # never through a link put at its name
            fh.write(text)
        _move_into_place(tmp, path, exclusive)
    except OSError as exc:
        disk_full = exc.errno in (errno.ENOSPC, errno.EDQUOT)
        if disk_full and not exclusive and _rewrite_in_place(path, text):
            return
        raise TrainingError(f"cannot write {path}: {exc.strerror or exc}"
                            + (" (disk full)" if disk_full else "")) from exc
    finally:
        if tmp is not None:
            tmp.unlink(missing_ok=True)


def _move_into_place(tmp: Path, path: Path, exclusive: bool) -> None:
    if not exclusive:
        os.replace(tmp, path)
        return
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise TrainingError(f"--log-dir {path.parent}: another run claimed it first "
                            f"({path.name} appeared after the checks)") from None


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
