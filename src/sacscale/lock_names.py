"""The names of this project's lock files and of record-run's work folders, and the refusal
of an output at one of them.

A folder's lock is `.<name>.lock` beside it (record-run's, a report's, another command's
output or set lock) or `.<name>.trainer-lock` (a trainer's run folder); the machine's training
lock is `sacscale-training.lock` in the private lock folder (sacscale.locks). A holder's
flock stays on the file it opened: an output written at a lock's name replaces that file,
the flock then holds an unlinked one, and the next process takes the lock as free (a second
trainer in a live run folder). An output is therefore never given such a name, held or not.

Nor is a folder made at one on the way to an output (`--output DIR/.x.lock/v.webp`): the
lock of `DIR/x` then opens a folder, and every later command taking it fails. A folder of
record-run's work-folder form (`.<run>.partial`) is made by record-run alone: made by another
command it stays in the set's runs/, where the next record-run of that run takes it for a
killed attempt. Only what the write would make is judged: a folder already there is not made,
and writing into a folder of the user's own changes no lock.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

LOCK = ".lock"
# a trainer's lock of its run folder: no `.<name>.lock` of any folder ends so
TRAINER_LOCK = ".trainer-lock"
MACHINE_LOCK_NAME = "sacscale-training.lock"
# record-run's work folder beside the run folder it becomes: `.<run>.partial`
WORK_SUFFIX = ".partial"


def is_lock_name(name: str) -> bool:
    """Whether `name` is the name of one of this project's lock files."""
    if name == MACHINE_LOCK_NAME:
        return True
    return name.startswith(".") and any(name.endswith(ending) and len(name) > len(ending) + 1
                                        for ending in (LOCK, TRAINER_LOCK))


def is_work_folder_name(name: str) -> bool:
    """Whether `name` has the form of record-run's work folder (`.<run>.partial`)."""
    return name.startswith(".") and name.endswith(WORK_SUFFIX) and len(name) > len(WORK_SUFFIX) + 1


def lock_name_problem(path: str | os.PathLike, work_folder: bool = False) -> str | None:
    """The one-line reason an output at `path` is refused, where its name is a lock file's, or
    where a folder it would make is named as a lock file or as a work folder of record-run's
    (`work_folder`: `path` is record-run's own work folder, which it makes so)."""
    name = Path(path).name
    if not is_lock_name(name):
        return made_name_problem(path, work_folder)
    return (f"{name} is named as a sacscale lock file (held or not), which an output there would replace (a "
            "second command then takes the lock of a live folder as free); give the output another name")


def made_name_problem(path: str | os.PathLike, work_folder: bool = False) -> str | None:
    """Why a part of `path` not there yet, which the write would make, may not be made: named
    as a lock file or as a work folder of record-run's; None where none is."""
    depth = len(Path(path).parts)
    for end, part in made_parts(path):
        if is_lock_name(part.name):
            return (f"{part} would be made on the way, and {part.name} is named as a sacscale lock file: a folder "
                    "there blocks that lock (every later command taking it fails); name another folder")
        if is_work_folder_name(part.name) and not (work_folder and end == depth):
            return (f"{part} would be made, and {part.name} is named as record-run's work folder of a run "
                    f"(.<run>{WORK_SUFFIX}), which only record-run makes (its next run of that name takes one for "
                    "a killed attempt); name another folder")
    return None


def made_parts(path: str | os.PathLike):
    """(how many parts deep, the path so far) of each part of `path` the write would make:
    a folder already there is not made, and is the user's to write into."""
    parts = Path(path).parts
    for end in range(1, len(parts) + 1):
        part = Path(*parts[:end])
        if not os.path.lexists(part):
            yield end, part


def refuse_lock_name(path: str | os.PathLike) -> None:
    """OSError (EINVAL) naming `path` where an output there would replace a lock file."""
    problem = lock_name_problem(path)
    if problem is not None:
        raise OSError(errno.EINVAL, problem, str(path))
