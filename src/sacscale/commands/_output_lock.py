"""The lock of the outputs a command writes together (a record and its figure, a table and
its statistics, a video and the record of its choice).

Each output is written atomically, but two commands given the same outputs at once could
leave one's record beside the other's figure, both exit 0 (`evaluate --output e.json
--figure e.png`, one with 2 envs per command, one with 1). The command holds the lock of
each of its outputs (`sacscale.locks.lock_beside`: `.<name>.lock` beside the file, removed
on release) from before its work until the last one is written. As for a report's folder,
a run set and a recorded run, a second command given any of them is refused at once, naming
the holder, rather than waited for: its work takes seconds to minutes and would then
replace the first one's outputs; the user decides which to run again.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from pathlib import Path

from sacscale.commands import BadInput
from sacscale.locks import HeldBeside, LockError, lock_beside


def _lock_name(path: str | os.PathLike) -> Path:
    """The output as the kernel reaches its folder (a link or `..` on the way, one lock); the
    file's own name kept: an output that is a link is replaced, not followed."""
    return Path(os.path.realpath(Path(path).parent)) / Path(path).name


@contextlib.contextmanager
def holding_outputs(*outputs: tuple[str, str | os.PathLike | None]) -> Iterator[None]:
    """Hold the lock of each output, (option, path) each, not given (None) skipped; BadInput,
    naming the option, the file and the holder, where another command holds one. Taken in
    one order (by resolved name): of two commands that share outputs, one always goes on.
    The folders made for the locks are removed again where nothing was written into them."""
    given = sorted(((_lock_name(path), option, path) for option, path in outputs if path), key=lambda g: str(g[0]))
    made = {p for name, _, _ in given for p in name.parents if not p.exists()}
    try:
        with contextlib.ExitStack() as held:
            for name, option, path in given:
                try:
                    held.enter_context(lock_beside(name))
                except HeldBeside as exc:
                    raise BadInput(f"{option} {path}: another sacscale command is writing this output ({exc.holder} "
                                   f"holds {exc.lock}); nothing was written: run this one once it has finished, or "
                                   "write it elsewhere") from None
                except LockError as exc:
                    _refuse_unwritable(name.parent, path)
                    raise BadInput(f"{option} {path}: cannot lock it to write it ({exc}); nothing was "
                                   "written") from None
            yield
    finally:
        for folder in sorted(made, key=lambda p: len(p.parts), reverse=True):
            with contextlib.suppress(OSError):
                folder.rmdir()  # only an empty one: a folder an output was written into stays


def _refuse_unwritable(folder: Path, path: str | os.PathLike) -> None:
    """A folder no file can be written in (a read-only disk, one not ours to write): named
    as the write itself would name it (`PATH: read-only file system`), not as its lock; so is
    a plain file where a folder on the way must be."""
    existing = next((p for p in (folder, *folder.parents) if p.exists()), None)
    if existing is not None and not existing.is_dir():
        raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(existing))
    try:
        read_only = os.statvfs(folder).f_flag & os.ST_RDONLY
    except OSError:
        return
    if read_only:
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
    if not os.access(folder, os.W_OK):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
