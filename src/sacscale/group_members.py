"""Who is in a group, as the system's user and group databases say: the rule on folders
and files shared through a group (sacscale.atomic) counts its members other than this user."""

from __future__ import annotations

import grp
import os
import pwd


def others_in_group(gid: int) -> list[str] | None:
    """The users other than this one in group `gid`, by name (its members, and those whose
    primary group it is); None when the system does not know the group."""
    try:
        group = grp.getgrgid(gid)
    except KeyError:
        return None
    me = os.getuid()
    others = {name for name in group.gr_mem if _uid_of(name) != me}
    others |= {user.pw_name for user in pwd.getpwall() if user.pw_gid == gid and user.pw_uid != me}
    return sorted(others)


def _uid_of(name: str) -> int | None:
    try:
        return pwd.getpwnam(name).pw_uid
    except KeyError:
        return None
