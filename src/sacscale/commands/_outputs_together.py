"""Outputs that appear together (a record and its figure, a table and its statistics): all of
them new, or none. Each output is written atomically, but one written before the next one's
write failed (a full disk) stayed, beside no figure or an earlier run's.

Each output but the last is kept, as it was, under a temporary name of its own (a hard link,
else a copy) before anything is moved: a rename that fails after others were placed puts the
earlier versions back, so a command leaves the previous outputs or the new set, never a mix,
and never nothing where the previous ones stood."""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path

from sacscale.atomic import move_into_place, staged_path, write_temporary
from sacscale.stopping import stops_held

# what a previous version's temporary name is made from: `<name>~` (a name no command writes)
_PREVIOUS = "~"


def write_together(*outputs: tuple[str | os.PathLike | None, bytes]) -> None:
    """Write each (path, bytes), a path of None skipped: every one to its temporary file first
    (sacscale.atomic.staged_path), then all moved into place with no stop landing between;
    a failure on the way leaves none of them new, the previous ones in place, and names the
    output it failed on."""
    given = [(Path(path), data) for path, data in outputs if path]
    with contextlib.ExitStack() as staged:
        temporaries = []
        for path, data in given:
            tmp = staged.enter_context(staged_path(path))
            _write_named(tmp, data, path)
            temporaries.append((tmp, path))
        kept = [_kept_previous(staged, path) for _, path in temporaries[:-1]]  # the last is placed last: none
        _place_all(temporaries, kept)


def _write_named(tmp: Path, data: bytes, path: Path) -> None:
    try:
        write_temporary(tmp, data)
    except OSError as exc:
        if exc.filename:
            raise
        raise OSError(exc.errno, exc.strerror, str(path)) from None  # a write's error names no file: one line


def _kept_previous(staged: contextlib.ExitStack, path: Path) -> Path | None:
    """The output now at `path` kept under a temporary name (removed when `staged` closes), or
    None where there is none. The temporary name is made for us and then replaced by a hard
    link to the output (a copy where the file system has none)."""
    if not os.path.lexists(path):
        return None
    keep = staged.enter_context(staged_path(path.with_name(path.name + _PREVIOUS)))
    try:
        keep.unlink()
        try:
            os.link(path, keep, follow_symlinks=False)
        except OSError:
            shutil.copy2(path, keep, follow_symlinks=False)
    except OSError as exc:
        raise OSError(exc.errno, f"cannot keep its previous version while the new one is placed ({exc.strerror}); "
                                 "nothing was written", str(path)) from None
    return keep


def _place_all(temporaries: list[tuple[Path, Path]], kept: list[Path | None]) -> None:
    """Each temporary renamed over its output; one that cannot be puts back the previous
    versions of those placed before it (`kept`, in the same order) and removes the new ones
    that had none."""
    placed: list[tuple[Path, Path | None]] = []
    with stops_held():
        try:
            for (tmp, path), previous in zip(temporaries, [*kept, None]):
                move_into_place(tmp, path)
                placed.append((path, previous))
        except BaseException:
            for path, previous in placed:
                with contextlib.suppress(OSError):
                    if previous is None:
                        path.unlink()
                    else:
                        os.rename(previous, path)
            raise
