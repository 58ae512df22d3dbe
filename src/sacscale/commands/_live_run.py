"""A run folder a trainer holds now (its trainer lock, beside it), refused by the commands
that read a run as finished: analyze-run, evaluate, compare-learning, render (and so
render-best), report (its learning curves) and manifest (the set's runs it hashes)."""

from __future__ import annotations

import os
from pathlib import Path

from sacscale.locks import TRAINER_LOCK, UntrustedLock, holder_beside, lock_file_beside


def live_trainer_problem(run_dir: str, read: str, verb: str) -> str | None:
    """Why a run folder a trainer holds now is not read, as a phrase after its name; None when
    no trainer holds it. Refused rather than read live: what is read (`read`: its figures,
    its checkpoint, its curves) passes for the run's own, and a run still training has neither
    its last events, its last checkpoint nor its end; its progress is the trainer's to show.
    `verb`: what the user does with it once its trainer has ended."""
    folder = Path(os.path.realpath(run_dir))
    try:
        holder = holder_beside(folder, TRAINER_LOCK)
    except UntrustedLock as exc:
        return str(exc)
    if holder is None:
        return None
    return (f"a sacscale train is training in this run folder now ({holder} holds "
            f"{lock_file_beside(folder, TRAINER_LOCK)}); {read} would be of a run not finished: "
            f"{verb} it once its trainer has ended")


def run_folder_of(checkpoint: str) -> str | None:
    """The run folder a command given a checkpoint or a run reads: the one given, or the one
    whose checkpoints/ holds the checkpoint given; None for a checkpoint elsewhere."""
    path = Path(os.path.realpath(checkpoint))
    if path.is_dir():
        return checkpoint
    if path.parent.name == "checkpoints":
        return str(path.parent.parent)
    return None
