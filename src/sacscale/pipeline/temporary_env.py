"""A run configuration's temporary folder (TMPDIR, TEMP or TMP in its env), judged at
planning time as sacscale.scratch judges the one a command runs with: a folder another
user owns, or one others may write without the sticky bit, lets that user swap what the
run's tools write there (torch put root's `torchinductor_root` into another user's
folder, and the run said nothing)."""

from __future__ import annotations

from pathlib import Path

from sacscale.pipeline.plan_values import PlanError, shown_path
from sacscale.scratch import UnsafeTemporaryFolder, checked_temporary_folder

# what Python's tempfile (and so torch) reads for its folder, in its order
TEMPORARY_FOLDER_ENV = ("TMPDIR", "TEMP", "TMP")


def temporary_folder_problem(path: str, name: str = "TMPDIR") -> str | None:
    """Why `path`, given as the variable `name`, is no safe temporary folder by
    sacscale.scratch's judgement (of the folder it would be made in, where it is not there
    yet); None when it is fine."""
    folder = Path(path).absolute()
    judged = next(f for f in (folder, *folder.parents) if f.exists())  # "/" is there
    try:
        checked_temporary_folder(str(judged), name)
    except UnsafeTemporaryFolder as exc:
        problem = exc.strerror
    except OSError as exc:
        problem = f"cannot be looked at ({exc.strerror})"
    else:
        return None
    return problem if judged == folder else f"{problem} (judged by {judged}, where it would be made)"


def check_temporary_folders(env: dict, where: str) -> None:
    """PlanError naming a run env's temporary folder that others could swap files in."""
    for name in TEMPORARY_FOLDER_ENV:
        value = str(env.get(name) or "")  # empty: tempfile passes over it
        problem = temporary_folder_problem(value, name) if value else None
        if problem:
            raise PlanError(f"{where}: {name} {shown_path(value)}: {problem}")
