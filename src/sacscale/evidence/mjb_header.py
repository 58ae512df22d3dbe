"""What a MuJoCo binary model (.mjb) says about the MuJoCo that saved it, read from its
header without MuJoCo. The header is five native ints: the file id 54321, sizeof(mjtNum),
then counts of mjModel's fields and, in the fourth place, the saving MuJoCo's mj_version()
(major * 1,000,000 + minor * 1,000 + patch, e.g. 4000000 for 4.0.0). MuJoCo refuses to load
a file whose header differs from the one it writes itself, so a .mjb loads only into the
version named there. Files of older MuJoCo hold a field count (at most a few hundred) in
that place and name no version."""

from __future__ import annotations

import struct

MJB_ID = 54321
_HEADER = struct.Struct("<5i")  # native ints; MuJoCo's platforms (x86-64, arm64) are little-endian
_FIRST_VERSION_NUMBER = 1_000_000  # versions are numbered so from the scheme that put them here


def saved_by(path) -> str | None:
    """The MuJoCo version (M.m.p) the .mjb's header names, or None where it names none (a
    file of an older MuJoCo, or not a .mjb at all)."""
    with open(path, "rb") as handle:
        head = handle.read(_HEADER.size)
    if len(head) < _HEADER.size:
        return None
    file_id, _, _, version, _ = _HEADER.unpack(head)
    if file_id != MJB_ID or version < _FIRST_VERSION_NUMBER:
        return None
    return f"{version // 1_000_000}.{version // 1_000 % 1_000}.{version % 1_000}"
