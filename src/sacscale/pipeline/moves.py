"""Moving what record-run sets aside (a failed attempt into the attic, a completed run's
learning state into its folder) where the destination may lie on another file system than
the run's folders: a `logs/` linked to a scratch disk is an ordinary layout. A rename cannot
cross file systems (EXDEV): the completed run was marked failed and a failed attempt, its
checkpoint with it, was deleted. Across file systems the entry is copied into a temporary
name beside the destination, renamed into place once whole, and only then removed from where
it was; a copy that fails is removed and the source is left as it was."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
from pathlib import Path

from sacscale.long_names import name_that_fits


def move(source: Path, target: Path) -> None:
    """Move `source` (a file or a folder) to `target`, which does not exist yet: one rename
    on one file system, else a copy made whole under a temporary name first. Raises OSError
    with `source` intact where the move cannot be made."""
    try:
        os.replace(source, target)
        return
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
    _copy_across(source, target)


def _copy_across(source: Path, target: Path) -> None:
    # a crash mid-copy leaves a hidden `.<name>.copying-<pid>`, never an entry read as whole
    partial = target.parent / name_that_fits(target.parent, ".", target.name, f".copying-{os.getpid()}")
    try:
        if source.is_dir() and not source.is_symlink():
            shutil.copytree(source, partial, symlinks=True)
        else:
            shutil.copy2(source, partial, follow_symlinks=False)
        os.replace(partial, target)
    except shutil.Error as exc:  # copytree's list of the files it could not copy
        _remove(partial)
        first = exc.args[0][0][2] if exc.args and exc.args[0] else exc
        raise OSError(errno.EIO, f"cannot copy it to another file system ({first})", str(source), None,
                      str(target)) from exc
    except OSError:
        _remove(partial)
        raise
    _remove(source)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
