"""What a completed run's folder gives up before it is renamed into place: the learning
state only a resume needs, set aside, and the ranks' event files, stored compressed; and
why, where the rename fails, it stays where it is."""

from __future__ import annotations

import os
from pathlib import Path

from sacscale.analysis.events import compress_event_files
from sacscale.hashes import sha256_file
from sacscale.long_names import error_text
from sacscale.locks import TRAINER_LOCK, UntrustedLock, holder_beside
from sacscale.no_replace import rename_into_place
from sacscale.output_owner import foreign_entry_problem
from sacscale.pipeline.moves import move
from sacscale.pipeline.run_folder_names import set_aside_name


def move_learning_state(work: Path, target: Path) -> dict | None:
    """Move what only a resume needs out of a completed run directory into `target`: our
    checkpoints/ (final.pt, rank*.pt: networks, optimiser moments, replay), replaced by a
    policy-only final.pt, and the reference trainer's own model_*.pt files. Returns what
    went where (SHA-256 of every moved file), or None when there was nothing to move."""
    moved: dict[str, str] = {}
    if target.exists():  # an earlier attempt's, superseded by this run: kept beside it
        rename_into_place(target, target.with_name(set_aside_name(target.name, "superseded", target.parent)))
    checkpoints = work / "checkpoints"
    if (checkpoints / "final.pt").is_file():
        target.mkdir(parents=True)
        move(checkpoints, target / "checkpoints")  # the state folder may be on another disk
        for f in sorted((target / "checkpoints").iterdir()):
            moved[f"checkpoints/{f.name}"] = sha256_file(f)
        checkpoints.mkdir()
        # imports torch (seconds): only our trainer's checkpoint needs it, not a reference run
        from sacscale.train.checkpoint import write_policy_only

        write_policy_only(target / "checkpoints" / "final.pt", checkpoints / "final.pt")
    for f in sorted(work.glob("ref_logs/*/*/model_*.pt")):
        rel = f.relative_to(work)
        (target / rel.parent).mkdir(parents=True, exist_ok=True)
        move(f, target / rel)
        moved[rel.as_posix()] = sha256_file(target / rel)
    if not moved:
        return None
    return {"moved_to": str(target), "sha256_by_file": moved,
            "kept": "checkpoints/final.pt without its learning state" if "checkpoints/final.pt" in moved else None}


def compress_rank_events(work: Path) -> list[str]:
    """Store a completed run's event files (tb/rank*/) gzip-compressed, as the reference
    trainer's are: about a quarter of the bytes, read back by the same strict reader. The
    stored files' paths, relative to the run."""
    stored = []
    for rank_dir in sorted(p for p in (work / "tb").glob("rank*") if p.is_dir()):
        stored += [f.relative_to(work).as_posix() for f in compress_event_files(rank_dir)]
    return stored


def not_in_place(name: str, work: Path, run_dir: Path, exc: OSError) -> tuple[str, int]:
    """Why a completed run stays in its work folder, and the exit status: most often another
    command (a plain `sacscale train --log-dir RUN_DIR`) made the run folder while this one
    trained (1: the input was right); another user's entry put at its name meanwhile (in a
    sticky shared folder) is refused as at the start (2)."""
    left = (f"the completed run is left in {work} (its run.json says completed); nothing was marked done: "
            f"move it to {run_dir} yourself once that folder is dealt with")
    if not os.path.lexists(run_dir):
        return f"run {name} completed, but cannot be moved to {run_dir} ({error_text(exc)}); {left}", 1
    if problem := foreign_entry_problem(run_dir):
        return f"run {name} completed, but {run_dir} was made meanwhile and {problem}; not replaced: {left}", 2
    try:
        holder = holder_beside(Path(os.path.realpath(run_dir)), TRAINER_LOCK)
    except UntrustedLock:
        holder = "a process behind another user's lock file"
    by = f"a sacscale train outside this record-run, {holder} holding its trainer lock" if holder else \
        "another command, a sacscale train given it as --log-dir perhaps"
    return f"run {name} completed, but {run_dir} was made meanwhile by {by}; not replaced: {left}", 1
