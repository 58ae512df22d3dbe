"""Whose entry stands at an output's name: an output never replaces another user's.

A write renames its finished temporary file over the output's name. In a sticky shared
folder (/tmp, /dev/shm) only an entry's owner, the folder's owner and root may do that, so
root's rename replaced another user's own file or link there without a word, where any
other user is refused (EPERM). Whatever stands at the name is theirs, not ours to remove:
an entry of neither this user nor root is refused, a file or a link alike (the link is
judged itself, never followed). Our own and root's are replaced as before. Nor is anything
written into a folder of another user's (`refuse_foreign_output`): what we put there is in
their hands, to replace or to point elsewhere.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

_KINDS = ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISREG, "a plain file"), (stat.S_ISDIR, "a folder"))


def foreign_entry_problem(path: str | os.PathLike, follow: bool = False) -> str | None:
    """Why the entry at `path` (not followed, unless `follow`) is not this user's to replace (a
    folder: to write into), as a phrase after its name; None where nothing stands there or it
    is ours or root's."""
    try:
        st = os.stat(path) if follow else os.lstat(path)
    except OSError:
        return None  # nothing there (or the write itself says what is wrong)
    if st.st_uid in (os.getuid(), 0):
        return None
    kind = next((name for test, name in _KINDS if test(st.st_mode)), "an entry")
    doing = "write into" if stat.S_ISDIR(st.st_mode) else "replace"
    return (f"belongs to uid {st.st_uid}, another user ({kind}), not this user's to {doing}; write the output "
            "elsewhere, or have its owner remove it")


def refuse_foreign_entry(path: str | Path) -> None:
    """OSError (EPERM) naming `path` where another user's entry stands at it: a write checks
    before it starts and again just before its rename, as the entry may appear meanwhile."""
    if problem := foreign_entry_problem(path):
        raise OSError(errno.EPERM, problem, str(path))


def refuse_foreign_output(path: str | Path) -> None:
    """OSError (EPERM) naming the folder `path` is written into where another user owns it (a
    link to it of ours followed: the folder is what is written into), else naming `path` where
    another user's entry stands at it."""
    folder = os.path.dirname(path) or "."
    if problem := foreign_entry_problem(folder, follow=True):
        raise OSError(errno.EPERM, problem, folder)
    refuse_foreign_entry(path)
