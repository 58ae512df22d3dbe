"""SHA-256 of a file on disk, refusing anything but a regular file."""

from __future__ import annotations

import errno
import hashlib
import os
import stat

CHUNK = 1 << 20


class NotARegularFile(ValueError):
    """The path is a symbolic link, a FIFO, a device or a socket: nothing to hash."""


def sha256_file(path: str | os.PathLike) -> str:
    """SHA-256 hex digest of a regular file. Opened without following a link and without
    blocking (a FIFO put in a file's place cannot hang it), then checked to be a regular
    file; NotARegularFile otherwise."""
    digest = hashlib.sha256()
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise NotARegularFile(f"{path}: a symbolic link; evidence must be regular files") from None
        raise
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise NotARegularFile(f"{path}: not a regular file")
        while chunk := fh.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


