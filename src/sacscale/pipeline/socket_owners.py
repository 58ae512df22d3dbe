"""Who holds an abstract unix socket name, asked of the kernel rather than of the holder.

Asking the holder (connect, then SO_PEERCRED) let anyone answer for it: an abstract name has
no permission check, so another user could fill the holder's listen queue and every later
look failed at once (EAGAIN), read as "not ours". The kernel's socket listing (sock_diag
netlink, what `ss -x` reads) gives each bound socket's name, inode and owner uid without
touching the socket, in the network namespace that the names live in, for any PID namespace;
only the pid is looked up, among the processes whose /proc this one can read.
"""

from __future__ import annotations

import os
import socket
import struct
from collections.abc import Callable

_SOCK_DIAG = 4  # NETLINK_SOCK_DIAG
_BY_FAMILY = 20  # SOCK_DIAG_BY_FAMILY
_REQUEST, _DUMP = 0x1, 0x300  # NLM_F_REQUEST, NLM_F_ROOT | NLM_F_MATCH
_ERROR, _DONE = 2, 3  # NLMSG_ERROR, NLMSG_DONE
_SHOW_NAME, _SHOW_UID = 0x1, 0x40  # UDIAG_SHOW_*
_NAME, _UID = 0, 7  # UNIX_DIAG_NAME, UNIX_DIAG_UID
# a name's own socket is bound and unconnected (TCP_CLOSE) or listening (TCP_LISTEN); a connection
# queued on a listener carries the listener's name too, and belongs to nobody until accepted
_OWN_STATES = {7, 10}
_HEADER = struct.Struct("=IHHII")  # struct nlmsghdr
_REQUEST_BODY = struct.Struct("=BBHIII2I")  # struct unix_diag_req
_REPLY_BODY = struct.Struct("=BBBBI2I")  # struct unix_diag_msg
_ATTRIBUTE = struct.Struct("=HH")  # struct rtattr


class ListingUnavailable(Exception):
    """The kernel's list of unix sockets, with their owners, cannot be had here."""


def bound(names: set[bytes]) -> dict[bytes, tuple[int, int]]:
    """{name: (socket inode, owner uid)} for each of `names` now bound in this network namespace."""
    return _dump(names.__contains__)


def bound_under(prefix: bytes) -> dict[bytes, tuple[int, int]]:
    """{name: (socket inode, owner uid)} for each name beginning with `prefix` now bound in this
    network namespace (a series whose names are not known in advance)."""
    return _dump(lambda name: name.startswith(prefix))


def _dump(wanted: Callable[[bytes], bool]) -> dict[bytes, tuple[int, int]]:
    try:
        with socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, _SOCK_DIAG) as link:
            body = _REQUEST_BODY.pack(socket.AF_UNIX, 0, 0, 0xFFFFFFFF, 0, _SHOW_NAME | _SHOW_UID,
                                      0xFFFFFFFF, 0xFFFFFFFF)
            link.sendto(_HEADER.pack(_HEADER.size + len(body), _BY_FAMILY, _REQUEST | _DUMP, 1, 0) + body, (0, 0))
            return _read_dump(link, wanted)
    except (OSError, AttributeError, struct.error) as exc:  # AttributeError: no AF_NETLINK in this build
        raise ListingUnavailable(f"the kernel's list of unix sockets (sock_diag) cannot be read here ({exc})") from None


def _read_dump(link: socket.socket, wanted: Callable[[bytes], bool]) -> dict[bytes, tuple[int, int]]:
    found: dict[bytes, tuple[int, int]] = {}
    while True:
        data = link.recv(1 << 16)
        offset = 0
        while offset + _HEADER.size <= len(data):
            length, kind = _HEADER.unpack_from(data, offset)[:2]
            if kind == _DONE:
                return found
            if kind == _ERROR:
                raise OSError(-struct.unpack_from("=i", data, offset + _HEADER.size)[0], "sock_diag refused the dump")
            _keep_if_named(data[offset + _HEADER.size:offset + length], wanted, found)
            offset += (length + 3) & ~3
        if not data:
            raise OSError("sock_diag ended its dump without saying done")


def _keep_if_named(message: bytes, wanted: Callable[[bytes], bool], found: dict[bytes, tuple[int, int]]) -> None:
    _, _, state, _, inode, _, _ = _REPLY_BODY.unpack_from(message)
    attributes = _attributes(message[_REPLY_BODY.size:])
    name = attributes.get(_NAME)
    if name is None or not wanted(name) or state not in _OWN_STATES:
        return
    if _UID not in attributes:
        raise OSError("this kernel does not give sockets' owners (UDIAG_SHOW_UID, Linux 5.3 and later)")
    found[name] = (inode, struct.unpack_from("=I", attributes[_UID])[0])


def _attributes(packed: bytes) -> dict[int, bytes]:
    attributes, offset = {}, 0
    while offset + _ATTRIBUTE.size <= len(packed):
        length, kind = _ATTRIBUTE.unpack_from(packed, offset)
        if length < _ATTRIBUTE.size:
            break
        attributes[kind] = packed[offset + _ATTRIBUTE.size:offset + length]
        offset += (length + 3) & ~3
    return attributes


def pid_holding(inode: int) -> int:
    """The pid of a process whose /proc this one can read holding socket `inode`, else 0 (its PID
    namespace hides it, or its /proc is not ours to read)."""
    wanted = f"socket:[{inode}]"
    for entry in os.scandir("/proc"):
        if entry.name.isdigit() and _holds(entry.path, wanted):
            return int(entry.name)
    return 0


def _holds(process: str, wanted: str) -> bool:
    try:
        for fd in os.scandir(f"{process}/fd"):
            try:
                if os.readlink(fd.path) == wanted:
                    return True
            except OSError:
                continue  # closed since we listed it
    except OSError:
        return False  # another user's, or gone
    return False
