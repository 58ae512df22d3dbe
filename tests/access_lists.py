"""Access control lists set on a test's folders and files as Linux stores them (the
extended attributes `system.posix_acl_access` and `system.posix_acl_default`), without
setfacl: a version, 2, then per entry a tag, permission bits and an id, little-endian."""

import errno
import os
import pwd
import struct

import pytest

USER_OBJ, USER, GROUP_OBJ, GROUP, MASK, OTHER = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20
NO_ID = 0xFFFFFFFF


def entry(tag, perm, ident=NO_ID):
    return struct.pack("<HHI", tag, perm, ident)


def stored(*entries):
    return struct.pack("<I", 2) + b"".join(entries)


def set_list(path, which, *entries):
    """The access (`which` "access") or default list of `path` set to `entries`; the test is
    skipped where the file system keeps no such lists."""
    try:
        os.setxattr(path, f"system.posix_acl_{which}", stored(*entries))
    except OSError as exc:
        if exc.errno in (errno.ENOTSUP, errno.EOPNOTSUPP):
            pytest.skip(f"the file system of {path} keeps no access control lists")
        raise


def unknown_uid():
    """A uid no user of this system has: another user by any count."""
    return next(u for u in range(424242, 424342) if not _known(u))


def _known(uid):
    try:
        pwd.getpwuid(uid)
    except KeyError:
        return False
    return True


def default_for(uid, perm=7, mask=7):
    """A default list as `setfacl -d -m u:<uid>:<perm>` leaves on a folder of mode 0755."""
    return (entry(USER_OBJ, 7), entry(USER, perm, uid), entry(GROUP_OBJ, 5), entry(MASK, mask), entry(OTHER, 5))
