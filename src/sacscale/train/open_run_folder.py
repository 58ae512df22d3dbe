"""A trainer's run folder is refused where others may make entries in it: o+w, or g+w for a
group holding another user (sacscale.atomic.others_can_write_file). A sticky bit, as a shared
mode 1777 folder has, only keeps them from removing the run's files, not from adding their
own run.json or train.log beside them, which record-run, analyze-run and verify later read."""

from __future__ import annotations

from pathlib import Path

from sacscale.atomic import others_can_write_file
from sacscale.checks import InputError


def refuse_open_run_folder(folder: str | Path, option: str) -> None:
    """InputError naming `folder` (given as `option`) where it exists and others may write in it."""
    folder = Path(folder)
    if folder.is_dir() and (problem := others_can_write_file(folder.stat(), str(folder))):
        raise InputError(f"{option} {folder}: {problem}, who could put their own files among the run's; give a "
                         "folder only you can write in; nothing was started")
