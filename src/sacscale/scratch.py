"""Scratch folders in the temporary folder (TMPDIR), only where no other user can swap them.

A folder of `tempfile`'s is made 0700, but inside a TMPDIR that another user owns, or that
others can write without the sticky bit, that user can rename it away, make one of the
same name and put a symbolic link at the name of the file about to be written there: the
write then replaces the file the link points to (root's, when root runs the command).
/tmp, writable by all but sticky, is fine: there only a file's owner can rename it.
"""

from __future__ import annotations

import errno
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sacscale.atomic import refuse_foreign_links, swappable_by_others


class UnsafeTemporaryFolder(PermissionError):
    """The temporary folder (or one above it) is another user's, or open to others without
    the sticky bit; the message says which and how to choose another (exit 2, one line)."""


def temporary_folder() -> str:
    """`tempfile.gettempdir()`, checked by `checked_temporary_folder`."""
    return checked_temporary_folder(tempfile.gettempdir())


def checked_temporary_folder(chosen: str, name: str = "TMPDIR") -> str:
    """`chosen` (given as the variable `name`), checked: it and every folder above it (where
    its links lead) are this user's or root's and not open to others without the sticky bit,
    and no other user's symbolic link is on the way. Raises UnsafeTemporaryFolder naming the
    folder."""
    try:
        refuse_foreign_links(chosen, reading=True)
    except OSError as exc:
        link = exc.strerror.split(";")[0]  # another user's symbolic link (uid N)
        raise UnsafeTemporaryFolder(errno.EPERM, f"the temporary folder ({name} {chosen}) is reached through {link}; "
                                    f"set {name} to a folder of your own", exc.filename) from None
    found = swappable_by_others(chosen)  # a group's other members count as other users (sacscale.atomic)
    if found:
        folder, problem = found
        what = f"the temporary folder ({name})" if folder is None else f"holds the temporary folder {chosen} and"
        raise UnsafeTemporaryFolder(errno.EPERM, f"{what} {problem}, who could swap the scratch files written "
                                    f"there; set {name} to a folder of your own", folder or chosen)
    return chosen


@contextmanager
def scratch_folder(prefix: str) -> Iterator[Path]:
    """A new private folder in the checked temporary folder, removed on leaving."""
    with tempfile.TemporaryDirectory(prefix=prefix, dir=temporary_folder()) as folder:
        yield Path(folder)


def make_scratch_folder(prefix: str) -> Path:
    """A new private folder (0700) in the checked temporary folder; the caller removes it."""
    return Path(tempfile.mkdtemp(prefix=prefix, dir=temporary_folder()))
