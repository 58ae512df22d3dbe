"""The names of this project's lock files, and the refusal of an output at one of them.

A folder's lock is `.<name>.lock` beside it (record-run's, a report's, another command's
output or set lock) or `.<name>.trainer-lock` (a trainer's run folder); the machine's training
lock is `sacscale-training.lock` in the private lock folder (sacscale.locks). A holder's
flock stays on the file it opened: an output written at a lock's name replaces that file,
the flock then holds an unlinked one, and the next process takes the lock as free (a second
trainer in a live run folder). An output is therefore never given such a name, held or not.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

LOCK = ".lock"
# a trainer's lock of its run folder: no `.<name>.lock` of any folder ends so
TRAINER_LOCK = ".trainer-lock"
MACHINE_LOCK_NAME = "sacscale-training.lock"


def is_lock_name(name: str) -> bool:
    """Whether `name` is the name of one of this project's lock files."""
    if name == MACHINE_LOCK_NAME:
        return True
    return name.startswith(".") and any(name.endswith(ending) and len(name) > len(ending) + 1
                                        for ending in (LOCK, TRAINER_LOCK))


def lock_name_problem(path: str | os.PathLike) -> str | None:
    """The one-line reason an output at `path` is refused, where its name is a lock file's."""
    name = Path(path).name
    if not is_lock_name(name):
        return None
    return (f"{name} is named as a sacscale lock file (held or not), which an output there would replace (a "
            "second command then takes the lock of a live folder as free); give the output another name")


def refuse_lock_name(path: str | os.PathLike) -> None:
    """OSError (EINVAL) naming `path` where an output there would replace a lock file."""
    problem = lock_name_problem(path)
    if problem is not None:
        raise OSError(errno.EINVAL, problem, str(path))
