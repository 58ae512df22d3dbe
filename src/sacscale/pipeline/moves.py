"""Moving what record-run sets aside (a failed attempt into the attic, a completed run's
learning state into its folder) where the destination may lie on another file system than
the run's folders: a `logs/` linked to a scratch disk is an ordinary layout. A rename cannot
cross file systems (EXDEV): the completed run was marked failed and a failed attempt, its
checkpoint with it, was deleted. Across file systems the entry is copied into a temporary
name beside the destination, renamed into place once whole, and only then removed from where
it was; a copy that fails is removed and the source is left as it was. A source that cannot
then be removed (an entry the file system refuses to delete) is reported, not called moved,
and marked with where its whole copy went, so that a rerun removes it rather than copying
what is left of it into the attic once more."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import sys
from pathlib import Path

from sacscale.long_names import name_that_fits

# written into a folder copied whole elsewhere but not removed: the copy's path
MOVED_MARKER = ".sacscale-moved-to"


class SourceLeft(OSError):
    """The copy is whole at its destination, but the source could not be removed."""


def move(source: Path, target: Path) -> None:
    """Move `source` (a file or a folder) to `target`, which does not exist yet: one rename
    on one file system, else a copy made whole under a temporary name first. Raises OSError
    with `source` intact where the move cannot be made, and SourceLeft where `target` is
    whole but what is left of `source` could not be removed."""
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
    try:
        remove(source)
    except OSError as exc:
        _mark_copied(source, target)
        raise SourceLeft(exc.errno, exc.strerror or str(exc), exc.filename or str(source)) from exc


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):  # a partial copy: what cannot be removed is hidden under its name
        remove(path)


def remove(path: Path) -> None:
    """Remove a file or a folder with all it holds; raises the first OSError met (after
    removing all it can), so a removal that fails is never taken for one done."""
    if path.is_dir() and not path.is_symlink():
        failed: list[OSError] = []
        if sys.version_info >= (3, 12):
            shutil.rmtree(path, onexc=lambda _f, _p, exc: failed.append(exc))
        else:
            shutil.rmtree(path, onerror=lambda _f, _p, info: failed.append(info[1]))
        if failed:
            raise failed[0]
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def _mark_copied(source: Path, target: Path) -> None:
    with contextlib.suppress(OSError):
        if source.is_dir() and not source.is_symlink():
            (source / MOVED_MARKER).write_text(f"{target}\n")


def copied_to(folder: Path) -> Path | None:
    """Where a folder not removed after its copy went, if the copy is there still; else None."""
    try:
        target = Path((folder / MOVED_MARKER).read_text().strip())
    except (OSError, UnicodeDecodeError):
        return None
    return target if target.is_absolute() and target.is_dir() else None
