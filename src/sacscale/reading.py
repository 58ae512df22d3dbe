"""Reading a record whole, bounded: a file of gigabytes (a sparse one costs no disk) put
where a record goes must be named, not read into memory until the machine kills us."""

from __future__ import annotations

import errno
import json
import math
import os
import re
import stat
from pathlib import Path

# The project's records (metrics, plans, reports, manifests) are at most a few MB.
RECORD_LIMIT = 64 << 20


class TooLarge(ValueError):
    """The file holds more than the limit; the message says how much it may hold."""


class NotRegularFile(TooLarge):
    """Not a regular file where a record is read: a symbolic link (perhaps swapped in after
    a walk that saw a file), a FIFO, a device or a folder. Refused as a file past the limit
    is, so every reader names it in the same one line."""


_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_DIR_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_DIRECTORY | os.O_CLOEXEC


def _not_followed(name: str, dir_fd: int | None, exc: OSError, what: str) -> NotRegularFile | OSError:
    """The error for `name` (in `dir_fd`) that os.open refused: a link named as one."""
    if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
        try:
            if stat.S_ISLNK(os.lstat(name, dir_fd=dir_fd).st_mode):
                return NotRegularFile(f"{what} is a symbolic link; a record is not read through a link")
        except OSError:
            pass
    return exc


def _walk_folders(within, parts: tuple[str, ...]) -> int:
    """A descriptor of the folder `within`/parts, each folder below `within` opened without
    following a link (one swapped in for a folder after a walk is refused)."""
    fd = os.open(within, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for name in parts:
            try:
                below = os.open(name, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                raise _not_followed(name, fd, exc, f"its folder {name!r}") from None
            os.close(fd)
            fd = below
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_regular(path: str | os.PathLike, within: str | os.PathLike | None = None) -> int:
    """A descriptor of the regular file `path`, opened without following a link and without
    blocking (a FIFO in a file's place cannot hang a reader); NotRegularFile otherwise. With
    `within` (a folder `path` lies in), the folders between are opened without following a
    link either."""
    path = Path(path)
    folder_fd = None
    if within is not None and path.parent != Path(within):
        folder_fd = _walk_folders(within, path.parent.relative_to(within).parts)
    elif within is not None:
        folder_fd = os.open(within, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        name = path.name if folder_fd is not None else str(path)
        try:
            fd = os.open(name, _FILE_FLAGS, dir_fd=folder_fd)
        except OSError as exc:
            raise _not_followed(name, folder_fd, exc, "the file") from None
    finally:
        if folder_fd is not None:
            os.close(folder_fd)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise NotRegularFile("not a regular file (a FIFO, device, socket or folder)")
    os.set_blocking(fd, True)
    return fd


def folder_kinds(path: str | os.PathLike, within: str | os.PathLike | None = None) -> dict[str, str]:
    """{name: "dir", "file", "link" or "other"} of each entry of the folder `path`, as the
    entry itself is (a link not followed). The folder is reached as open_regular reaches a
    file: with `within`, the folders from there on (`path` itself too) are opened without
    following a link, so the folder listed is the one a later open_regular(.., within) of
    its files reads from, never one a link swapped in meanwhile leads to."""
    path, within = Path(path), Path(path if within is None else within)
    fd = _walk_folders(within, path.relative_to(within).parts)
    try:
        with os.scandir(fd) as entries:
            return {e.name: "link" if e.is_symlink() else "dir" if e.is_dir(follow_symlinks=False)
                    else "file" if e.is_file(follow_symlinks=False) else "other" for e in entries}
    finally:
        os.close(fd)


def open_record(path: str | os.PathLike, within: str | os.PathLike | None = None):
    """`path` opened for reading in binary as open_regular opens it (for an image reader)."""
    return os.fdopen(open_regular(path, within), "rb")


_PIECE = 1 << 20


def read_limited(path: str | os.PathLike, limit: int = RECORD_LIMIT,
                 within: str | os.PathLike | None = None) -> bytes:
    """The bytes of `path`, refused (TooLarge) past `limit` without reading the rest; opened
    as open_regular does (NotRegularFile for a link, a FIFO, ...)."""
    chunks, total = [], 0
    with os.fdopen(open_regular(path, within), "rb") as fh:
        # in pieces: one read of limit + 1 bytes asks for that much memory for the smallest record
        while total <= limit and (chunk := fh.read(min(_PIECE, limit + 1 - total))):
            chunks.append(chunk)
            total += len(chunk)
    data = b"".join(chunks)
    if len(data) > limit:
        raise TooLarge(f"larger than {limit >> 20} MB, far more than a record of this project holds")
    return data


class RecordJSONError(json.JSONDecodeError):
    """A record that JSON parses but that readers could read two ways (a key given twice:
    Python keeps the last value, other readers the first) or that Python cannot hold (an
    integer of thousands of digits: ValueError from int(), named by no one)."""

    def __init__(self, msg: str) -> None:
        ValueError.__init__(self, msg)
        self.msg, self.doc, self.pos, self.lineno, self.colno = msg, "", 0, 1, 1


class NestedTooDeep(RecordJSONError):
    """A record nested past Python's recursion limit (`[[[...]]]`)."""


_INT_DIGITS = 100  # a count of bytes or steps has 20 at most


def _unique(pairs: list) -> dict:
    out = {}
    for key, value in pairs:
        if key in out:
            raise RecordJSONError(f"the key {key[:60]!r} is given twice (readers differ on which value holds)")
        out[key] = value
    return out


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > _INT_DIGITS:
        raise RecordJSONError(f"an integer of {len(text):,} digits (a record holds none past {_INT_DIGITS})")
    return int(text)


# `\ud800`..`\udfff` in JSON: half of a pair, which parses to a string no UTF-8 writer can
# write (the report, the status block, a terminal) unless its other half follows
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def refuse_lone_surrogates(value) -> None:
    """RecordJSONError when a string or key of `value` holds half of a surrogate pair."""
    todo = [value]
    while todo:
        item = todo.pop()
        if isinstance(item, dict):
            todo += list(item) + list(item.values())
        elif isinstance(item, list):
            todo += item
        elif isinstance(item, str) and any("\ud800" <= ch <= "\udfff" for ch in item):
            half = next(ch for ch in item if "\ud800" <= ch <= "\udfff")
            raise RecordJSONError(f"a string with a lone surrogate ({half.encode('unicode_escape').decode()}), "
                                  "half of a character that no UTF-8 text can hold")


def _no_constant(name: str):
    raise RecordJSONError(f"holds {name}, which JSON does not define (the project writes none)")


def _first_infinite(value) -> str | None:
    """Where in `value` (`key.key[index]`) an infinite number is, or None. Not recursive: the
    parser took nesting to Python's recursion limit."""
    todo = [("", value)]
    while todo:
        where, item = todo.pop()
        if isinstance(item, float) and math.isinf(item):
            return where or "the value"
        inner = item.items() if isinstance(item, dict) else enumerate(item) if isinstance(item, list) else ()
        todo += reversed([(f"{where}[{k}]" if isinstance(k, int) else f"{where}.{k}" if where else str(k), v)
                          for k, v in inner])
    return None


def loads_record(text: str | bytes, finite: bool = False):
    """json.loads for the project's records: a key given twice, an integer too long to read,
    a lone surrogate or nesting past Python's recursion limit is refused with a
    JSONDecodeError (RecordJSONError), as malformed JSON is; with `finite`, NaN and Infinity
    too (a value given on a command line, which a record would otherwise carry as null)."""
    constants = {"parse_constant": _no_constant} if finite else {}
    try:
        value = json.loads(text, object_pairs_hook=_unique, parse_int=_bounded_int, **constants)
    except RecursionError:  # raised bare, it reached the command's last resort, which knows no file
        raise NestedTooDeep("JSON nested too deep") from None
    if finite and (where := _first_infinite(value)) is not None:  # 1e400: read as infinity, written as null
        raise RecordJSONError(f"{where}: a number too large for a float (JSON readers take it as infinity, "
                              "and it would be recorded as null)")
    if _SURROGATE_ESCAPE.search(text if isinstance(text, str) else text.decode("utf-8", "replace")):
        refuse_lone_surrogates(value)
    return value
