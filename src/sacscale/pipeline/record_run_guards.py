"""What record-run may not move or write into: another command's live folder.

Its run folder or work folder, set aside before a run, may hold a live run deeper down (a
plain train in `run/inner`): moving it killed that train mid-run. Any of the four folders it
makes or moves into (run, work, attic, learning state) may be, or lie inside, another live
run's folder (a plain train's, another record-run's work folder): the attempts, the run
itself or its learning state landed in that run's evidence. Each is refused before anything
is moved or started; the locks are looked at under record-run's own (sacscale.pipeline.held_locks).
"""

from __future__ import annotations

import os
from pathlib import Path

from sacscale.locks import UntrustedLock
from sacscale.pipeline.held_locks import held_at_or_above, held_under


def live_run_inside(run_dir: Path, folder: Path, which: str, what: str) -> str | None:
    """Why `folder` (record-run's `which`, taken for `what`) may not be set aside: a held lock
    under it, in one line; None if none."""
    try:
        held = held_under(Path(os.path.realpath(folder)))
    except UntrustedLock as exc:
        return f"the run {run_dir} not started: {exc}"
    if held is None:
        return None
    return (f"the run {run_dir}: {held.doing} inside its {which} {folder} ({held.said()}); not {what} to set aside "
            "with it: wait for it to end (nothing was moved or started)")


# what would land in the live folder's files, for each folder record-run makes or moves into
_LANDS = {"--run-dir": "this run, renamed there once complete, would land in that run's files",
          "--work-dir": "this run would train among that run's files",
          "--attic": "attempts moved there would land in that run's files",
          "--state-dir": "this run's learning state, moved there once it trains, would land in that run's files"}


def live_folders_problem(run_dir: Path, work_dir: Path, attic: Path, state_dir: Path | None) -> str | None:
    """Why one of record-run's folders may not be made or moved into: it is, or lies inside,
    a folder whose lock another command holds (a live train's run folder, another record-run's
    work or run folder), in one line naming the option and the holder; None if none. The run
    and work folders' own locks are not looked at here: they are record-run's own, taken
    after this look, and a holder there is refused in words of its own (run_record)."""
    given = (("--run-dir", run_dir), ("--work-dir", work_dir), ("--attic", attic), ("--state-dir", state_dir))
    for option, folder in given:
        if folder is not None and (problem := _inside_a_live_folder(option, folder)):
            return problem
    return None


def _inside_a_live_folder(option: str, folder: Path) -> str | None:
    real = Path(os.path.realpath(folder))
    try:
        held = held_at_or_above(real.parent if option in ("--run-dir", "--work-dir") else real)
    except UntrustedLock as exc:
        return f"{option} {folder}: {exc}"
    if held is None:
        return None
    return (f"{option} {folder}: is or lies inside a live folder of another command, {held.beside}: {held.doing} "
            f"there ({held.said()}); {_LANDS[option]}: give a folder outside it")


def taken_meanwhile(work: Path) -> tuple[str, str] | None:
    """A held lock under a failed attempt's work folder, once its command has ended: (what to
    say, the cause), the folder being left as it is; None if none."""
    try:
        held = held_under(Path(os.path.realpath(work)))
    except UntrustedLock as exc:
        return f"a lock file of another user's inside it ({exc})", "a lock file of another user's inside it"
    if held is None:
        return None
    return (f"{held.doing} inside it meanwhile ({held.said()})",
            f"{held.doing.split(' is ')[0]} took a folder inside its work folder ({held.said()})")
