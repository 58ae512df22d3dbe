"""Renaming an output into place without replacing another user's entry that came meanwhile.

Judging the entry at an output's name and then renaming over it leaves a moment between
the two: in a sticky shared folder (/tmp, /dev/shm) another user may put a file, a link or
an empty folder at the name in that moment, and root's rename (or the folder owner's) would
replace it without a word. So where nothing stood at the name when judged, the rename
itself refuses to replace anything (renameat2 with RENAME_NOREPLACE); what came meanwhile is
judged then: another user's is refused, our own or root's replaced as before. Where our own
or root's entry stood, it is replaced as before: no other user can swap that one out in a
sticky folder.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
from pathlib import Path

from sacscale.output_owner import refuse_foreign_entry

_AT_FDCWD = -100
_RENAME_NOREPLACE = 1
# how often an entry that came and went again at the name is judged before giving up
_TRIES = 5


def _renameat2():
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        call = libc.renameat2
    except (OSError, AttributeError):  # no libc by that name, or one older than renameat2 (glibc 2.28)
        return None
    call.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint)
    call.restype = ctypes.c_int
    return call


_CALL = _renameat2()


def rename_no_replace(source: str | os.PathLike, target: str | os.PathLike) -> None:
    """Rename `source` to `target`; FileExistsError where anything stands at `target` (it is
    left as it is)."""
    if _CALL is not None:
        if _CALL(_AT_FDCWD, os.fsencode(source), _AT_FDCWD, os.fsencode(target), _RENAME_NOREPLACE) == 0:
            return
        code = ctypes.get_errno()
        if code not in (errno.EINVAL, errno.ENOSYS, errno.ENOTSUP):
            raise OSError(code, os.strerror(code), str(source), None, str(target))
    _fallback(source, target)


def _fallback(source: str | os.PathLike, target: str | os.PathLike) -> None:
    """A kernel or file system without RENAME_NOREPLACE: a file is linked at the name (which
    fails where anything stands there) and then unlinked from its old one; a folder cannot be
    linked, so it is judged once more as close to the rename as can be and renamed: a
    moment remains where another user's empty folder could be replaced."""
    if not os.path.isdir(source) or os.path.islink(source):
        try:
            os.link(source, target, follow_symlinks=False)
        except OSError as exc:  # EEXIST: something stands there; the others: a file system without hard links
            if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EMLINK):
                raise
        else:
            os.unlink(source)
            return
    if os.path.lexists(target):
        raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(target))
    os.rename(source, target)


def rename_into_place(source: str | os.PathLike, target: str | os.PathLike) -> None:
    """Rename `source` over `target`: our own or root's entry there is replaced; another
    user's is refused (OSError EPERM naming `target`, `source` left where it is), also one
    that came at the name after it was judged."""
    for _ in range(_TRIES):
        try:
            owner = os.lstat(target).st_uid
        except FileNotFoundError:
            try:
                rename_no_replace(source, target)
                return
            except FileExistsError:
                continue  # something came meanwhile: judged again
        if owner in (os.getuid(), 0):
            os.replace(source, target)  # our own or root's: no other user can swap it out in a sticky folder
            return
        refuse_foreign_entry(target)  # judged again, to name it; gone meanwhile, the rename is tried again
    raise FileExistsError(errno.EEXIST, "entries kept coming and going at this name while the output was moved "
                          "there; nothing was replaced", str(Path(target)))
