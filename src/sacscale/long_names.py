"""Names made beside a file or folder the user named (a temporary file, a lock file), kept
within the longest name the file system takes: a legal name near that limit is cut, and a
digest of the whole name keeps it apart from other long names of the same start."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

# The longest path Linux opens: a part of NAME_BYTES, the whole of PATH_BYTES
NAME_BYTES, PATH_BYTES = 255, 4096


def size(name: str) -> int:
    """The name's length in bytes, as the file system counts it."""
    return len(os.fsencode(name))


def name_max(folder: Path) -> int:
    """The longest file name, in bytes, the file system of `folder` takes (255 where unknown)."""
    try:
        return os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError):
        return 255


def cut_with_digest(stem: str, whole: str, room: int, mark: str = "") -> str:
    """`<stem cut>.<mark><digest>` in at most `room` bytes: as much of `stem` as fits, then a
    digest of `whole`, the name it stands for (after `mark`, which tells a cut name apart)."""
    digest = mark + hashlib.sha256(os.fsencode(whole)).hexdigest()[:16]
    room -= size(digest) + 1
    while size(stem) > room:
        stem = stem[:-1]
    return f"{stem}.{digest}"


def name_that_fits(folder: Path, before: str, name: str, after: str, mark: str = "") -> str:
    """`<before><name><after>` where `folder`'s file system takes a name that long (judged by
    the nearest existing folder, as `folder` may be made later); else `name` is cut to fit
    with its digest (cut_with_digest, after `mark`). It depends on its arguments alone, so every process
    finds one file for one name."""
    whole = f"{before}{name}{after}"
    limit = name_max(_nearest_existing(folder))
    if size(whole) <= limit:
        return whole
    return f"{before}{cut_with_digest(name, name, limit - size(before) - size(after), mark)}{after}"


def _nearest_existing(folder: Path) -> Path:
    while not folder.is_dir() and folder.parent != folder:
        folder = folder.parent
    return folder


def shortened(text: str, keep: int = 160) -> str:
    """A long name as an error shows it: its start, and how much more there is."""
    return repr(text) if len(text) <= keep else f"{text[:keep]!r}... ({len(text) - keep:,} more characters)"


def too_long_problem(path: str | os.PathLike, room: int = 0, made: str = "") -> str | None:
    """Why no file can be made at `path` (joined to the working folder), where a name on it or
    the whole is longer than Linux opens (ENAMETOOLONG, which `stat` too raises); or, where
    the command makes a longer path from it (`made`, `room` bytes longer: a temporary file
    beside it, the files of a folder it fills), why that one cannot be made; or None."""
    whole = os.fsencode(os.path.abspath(path))
    longest = max(len(part) for part in whole.split(b"/"))
    if len(whole) >= PATH_BYTES or longest > NAME_BYTES:
        return (f"{shortened(os.fspath(path))} is longer than a path can be ({NAME_BYTES} bytes a name, "
                f"{PATH_BYTES - 1:,} in all; its longest name is {longest:,} bytes, the whole {len(whole):,}): "
                f"give a shorter one")
    if len(whole) + room < PATH_BYTES:
        return None
    return (f"{shortened(os.fspath(path))} is {len(whole):,} bytes long, too long for {made}, which would be "
            f"{len(whole) + room:,} (a path can be {PATH_BYTES - 1:,} at most): give a shorter one")


# what a write's temporary file adds to its output's name (sacscale.atomic):
# `.<stem>.tmp<pid>.<thread id><suffix>`, the longest pid 2^22, a thread id 64 bits
TEMPORARY_EXTRA = len(".") + len(".tmp") + len(f"{2 ** 22}.{2 ** 64}")


def temporary_room(name: str) -> int:
    """How many bytes longer than `name` the temporary file written beside it is named: a
    name near the limit has its temporary's cut to fit (atomic.temporary_path)."""
    return max(0, min(TEMPORARY_EXTRA, NAME_BYTES - size(name)))


def error_text(exc: OSError) -> str:
    """An OSError as a line shows it, each path in it shortened (a path too long to open
    is thousands of characters, once or twice)."""
    names = [shortened(os.fsdecode(f) if isinstance(f, bytes) else str(f))
             for f in (exc.filename, exc.filename2) if f is not None]
    reason = exc.strerror or str(exc)
    return f"{' -> '.join(names)}: {reason}" if names else reason
