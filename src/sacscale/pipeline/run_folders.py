"""The folders `sacscale record-run` is given, checked before anything is moved or started:
a failed attempt is moved from the work folder into the attic, a stale run folder too, so an
attic inside either could not take it (the attempt and its log were deleted instead), and a
work or run folder holding the current directory would have that directory moved away."""

from __future__ import annotations

import os
from pathlib import Path


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))  # links and `..` resolved: two names of one folder compare equal


def folders_problem(run_dir: Path, work_dir: Path, attic: Path) -> str | None:
    """What is wrong with the three folders, in one line naming the option; None if nothing."""
    here = Path(os.getcwd())
    folders = (("--work-dir", work_dir), ("--run-dir", run_dir))
    for option, folder in folders:
        if here.is_relative_to(_real(folder)):  # `/` holds every current directory
            return f"{option} {folder}: is or holds the current directory {here}, which would be moved away"
    if _real(work_dir).is_relative_to(_real(run_dir)) or _real(run_dir).is_relative_to(_real(work_dir)):
        return (f"--work-dir {work_dir} and --run-dir {run_dir}: one is or holds the other; the work folder is "
                "renamed to the run folder once complete")
    for option, folder in folders:
        if _real(attic).is_relative_to(_real(folder)):
            return (f"--attic {attic}: is or lies inside {option} {folder}, which is itself moved to the attic; "
                    "give a folder outside it")
    return None


def make_attic(attic: Path) -> str | None:
    """Make the attic now, so that one that cannot be made (a file in the way, no permission)
    is refused before the run rather than found after it; the problem in one line, else None."""
    try:
        attic.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return f"--attic {attic}: cannot be made ({exc.strerror or exc}); failed attempts are kept there"
    if not os.access(attic, os.W_OK | os.X_OK):
        return f"--attic {attic}: not writable by this user; failed attempts are kept there"
    return None
