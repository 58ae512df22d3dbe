"""Whether a folder is a mount point: where another file system is mounted (os.path.ismount's
test, a device differing from its parent's), or a bind mount of a folder of the same file
system, which only the mount table shows. A command that renames a folder by its name, or
renames entries into it from beside it, can do neither at a mount point."""

from __future__ import annotations

import os
import re


def is_mount_point(folder: str | os.PathLike) -> bool:
    """Whether `folder` (an existing folder) is where a file system or a bind mount is mounted."""
    if os.path.ismount(folder):
        return True
    return os.path.isdir(folder) and os.path.realpath(folder) in mount_points()


def mount_points() -> set[str]:
    """Where file systems are mounted (/proc/self/mountinfo's fifth field, its octal escapes
    undone); none where it cannot be read (the st_dev test of os.path.ismount tells alone)."""
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as table:
            fields = [line.split() for line in table]
    except OSError:
        return set()
    return {re.sub(r"\\([0-7]{3})", lambda code: chr(int(code[1], 8)), f[4]) for f in fields if len(f) > 4}


