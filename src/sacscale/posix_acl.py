"""POSIX access control lists as Linux keeps them, in extended attributes, read with the
standard library: who besides the mode's three classes may write an entry (the access list,
`system.posix_acl_access`) or every entry made in a folder (its default list,
`system.posix_acl_default`, which new entries inherit whatever the folder's mode shows).

The stored form (linux/posix_acl_xattr.h), all little-endian: a 4-byte version, 2, then one
8-byte entry per line of the list: a 2-byte tag (whose line: the owner, a named user, the
owning group, a named group, the mask, the others), 2 bytes of permission bits (4 read,
2 write, 1 execute) and a 4-byte user or group id (meaningful for named users and groups)."""

from __future__ import annotations

import os
import struct
from typing import NamedTuple

ACCESS = "system.posix_acl_access"
DEFAULT = "system.posix_acl_default"

USER_OBJ, USER, GROUP_OBJ, GROUP, MASK, OTHER = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20
_WRITE = 0o2
_VERSION = 2
_HEADER = struct.Struct("<I")
_ENTRY = struct.Struct("<HHI")
# the lines the mask caps: the owner's and the others' are not
_MASKED = (USER, GROUP_OBJ, GROUP)


class Entry(NamedTuple):
    tag: int
    perm: int
    id: int


class UnreadableList(ValueError):
    """An attribute that is not an access control list of the known form."""


def parse(data: bytes) -> list[Entry]:
    """The entries of a stored list; UnreadableList for any other form."""
    if len(data) < _HEADER.size or (len(data) - _HEADER.size) % _ENTRY.size:
        raise UnreadableList(f"{len(data)} bytes, not a version and whole {_ENTRY.size}-byte entries")
    (version,) = _HEADER.unpack_from(data)
    if version != _VERSION:
        raise UnreadableList(f"version {version}, not {_VERSION}")
    return [Entry(*_ENTRY.unpack_from(data, at)) for at in range(_HEADER.size, len(data), _ENTRY.size)]


def read(path: str, which: str) -> list[Entry] | None:
    """The list `which` (ACCESS or DEFAULT) of `path`, links followed; None where it has none
    (or its file system keeps none: then the mode alone decides). UnreadableList for an
    attribute of another form."""
    try:
        data = os.getxattr(path, which)
    except OSError:
        return None
    return parse(data)


def writers(entries: list[Entry]) -> list[Entry]:
    """The lines of a list that give write, in its order: a named user's, the owning group's
    and a named group's where the mask (if any) lets write through too, and the others'.
    The owner's line is left out: an owner may change the list anyway."""
    mask = next((e.perm for e in entries if e.tag == MASK), 0o7)
    return [e for e in entries
            if e.tag in (*_MASKED, OTHER) and e.perm & (mask if e.tag in _MASKED else 0o7) & _WRITE]
