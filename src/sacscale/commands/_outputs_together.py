"""Outputs that appear together (a record and its figure, a table and its statistics): all of
them new, or none. Each output is written atomically, but one written before the next one's
write failed (a full disk) stayed, beside no figure or an earlier run's."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from sacscale.atomic import move_into_place, staged_path, write_temporary
from sacscale.stopping import stops_held


def write_together(*outputs: tuple[str | os.PathLike | None, bytes]) -> None:
    """Write each (path, bytes), a path of None skipped: every one to its temporary file first
    (sacscale.atomic.staged_path), then all moved into place with no stop landing between;
    a failure on the way leaves none of them new and names the output it failed on."""
    given = [(Path(path), data) for path, data in outputs if path]
    with contextlib.ExitStack() as staged:
        temporaries = []
        for path, data in given:
            tmp = staged.enter_context(staged_path(path))
            _write_named(tmp, data, path)
            temporaries.append((tmp, path))
        _place_all(temporaries)


def _write_named(tmp: Path, data: bytes, path: Path) -> None:
    try:
        write_temporary(tmp, data)
    except OSError as exc:
        if exc.filename:
            raise
        raise OSError(exc.errno, exc.strerror, str(path)) from None  # a write's error names no file: one line


def _place_all(temporaries: list[tuple[Path, Path]]) -> None:
    """Each temporary renamed over its output; one that cannot be takes those placed with it."""
    placed: list[Path] = []
    with stops_held():
        try:
            for tmp, path in temporaries:
                move_into_place(tmp, path)
                placed.append(path)
        except BaseException:
            for path in placed:
                path.unlink(missing_ok=True)
            raise
