"""The training lock's second hold, one that every mount namespace of the machine shares.

The lock file lives in a folder named by its path (`/tmp/sacscale-<uid>` by default), and a
process with a /tmp of its own (systemd `PrivateTmp=`, `unshare -m`, a container that shares
the host's GPUs and network) sees another folder at that name, so its run and one outside it
both held "the" lock and trained at once. An abstract unix socket has no file: its name is
one per network namespace, whatever the mount namespace, and the kernel drops it when its
holder exits, killed or not (nothing stale is left). The name is made of the user's id and
the lock folder's path as named, so the same setting means the same lock everywhere, and a
folder set apart on purpose (a test session's) stays a machine of its own. A name another
user bound first (abstract names have no owner) is passed over, not obeyed: their process
cannot hold this user's runs back; the lock file still holds in this namespace.
"""

from __future__ import annotations

import errno
import hashlib
import os
import socket
import struct
import sys

_PEER_CREDENTIALS = struct.Struct("3i")  # struct ucred: pid, uid, gid


def socket_name(folder: str) -> bytes:
    digest = hashlib.sha256(f"{os.getuid()}\0{folder}".encode("utf-8", "surrogateescape")).hexdigest()[:32]
    return b"\0sacscale-training-lock-" + digest.encode()


def hold(folder: str) -> tuple[socket.socket | None, int | None]:
    """(the bound socket, None) when this process now holds the machine-wide name for the lock
    folder `folder`, (None, the holder's pid, 0 where its PID namespace hides it) when a
    process of this user holds it, (None, None) where abstract sockets are not to be had
    (not Linux) or the name is another user's."""
    if sys.platform != "linux":
        return None, None
    name = socket_name(folder)
    for _ in range(2):  # a holder that exits between our bind and our look is not a holder
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)  # not inherited by the run's processes
        try:
            sock.bind(name)
            sock.listen(64)  # only so that a refused run can read who holds it
            return sock, None
        except OSError as exc:
            sock.close()
            if exc.errno != errno.EADDRINUSE:
                return None, None
        pid = _holder(name)
        if pid is not None:
            return None, pid
    return None, None


def _holder(name: bytes) -> int | None:
    """The pid of this user's process bound to `name` (0 outside our PID namespace), else None."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(2.0)
        try:
            probe.connect(name)
            pid, uid, _ = _PEER_CREDENTIALS.unpack(probe.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                                                     _PEER_CREDENTIALS.size))
        except TimeoutError:
            return 0  # its queue is full of earlier lookers: held all the same
        except OSError:
            return None  # gone, or bound by something that does not listen: not a holder of ours
    return pid if uid == os.getuid() else None
