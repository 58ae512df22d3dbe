"""What record-run may not move or write into: another command's live folder.

Its run folder or work folder, set aside before a run, may hold a live run deeper down (a
plain train in `run/inner`): moving it killed that train mid-run. Its attic may be, or lie
inside, another live run's folder (another record-run's work folder): the attempts and the
superseded run it moves there landed in that run's evidence. Each is refused before anything
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


def attic_problem(attic: Path) -> str | None:
    """Why `attic` may not take this run's attempts: it is, or lies inside, a folder whose lock
    another command holds (another run's live work or run folder); None if none."""
    try:
        held = held_at_or_above(attic)
    except UntrustedLock as exc:
        return f"--attic {attic}: {exc}"
    if held is None:
        return None
    return (f"--attic {attic}: is or lies inside a live folder of another command: {held.doing} there "
            f"({held.said()}); attempts moved there would land in that run's files: give an attic of its own "
            "(nothing was moved or started)")


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
