"""The training lock's second hold, one that every mount namespace of the machine shares.

The lock file lives in a folder named by its path (`/tmp/sacscale-<uid>` by default), and a
process with a /tmp of its own (systemd `PrivateTmp=`, `unshare -m`, a container that shares
the host's GPUs and network) sees another folder at that name, so its run and one outside it
both held "the" lock and trained at once. An abstract unix socket has no file: its name is
one per network namespace, whatever the mount namespace, and the kernel drops it when its
holder exits, killed or not (nothing stale is left). The name is made of the user's id and
the lock folder's path as spelled (`//tmp/x`, `/tmp/x/` and `/tmp/x` spelled one way; links
are not followed), so the same setting means the same lock everywhere, and a folder set apart
on purpose (a test session's) stays a machine of its own. Abstract names have no owner and
anyone can compute them, so the lock is a short series of names: a name another user bound is
passed over (their process cannot hold this user's runs back), the first free one is bound,
and a holder then looks at every other name of the series, so that two of this user's holders
of different names always see each other. Who holds a name is read from the kernel's list of
unix sockets (its owner uid; `socket_owners`), never by connecting: a holder that must answer
can be kept from answering by anyone (a full listen queue), so a holder binds and never
listens. Only where another user holds every name, or the kernel's list cannot be read, is the
machine-wide hold off, said on stderr; the lock file still holds in this namespace.

That series is the measured run's exclusive hold. Commands run by hand hold the lock shared,
any number at once, so each binds a name of its own in a second series for the folder (a
shared prefix, its command, a random part nobody can bind first) and then looks at the
exclusive series; a measured run, once bound, looks for this user's names under that prefix.
Both bind before they look, so of two starting together at least one sees the other.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import secrets
import socket
import sys

from sacscale.pipeline import socket_owners


SERIES = 8  # names tried per lock folder: enough that squatting them all is deliberate, and said
# A shared name: its prefix (64 bytes), the command, "-", 16 random hex digits; an abstract
# name has at most 108 bytes (sun_path), so the command at most 26 characters.
_COMMAND = re.compile(r"[a-z][a-z-]{0,25}")
_RANDOM_BYTES = 8


def socket_name(folder: str, index: int) -> bytes:
    """The `index`th name of the series a measured run holds (one at a time) for `folder`."""
    return b"\0sacscale-training-lock-" + _digest(folder, str(index))


def shared_prefix(folder: str) -> bytes:
    """What every name a command run by hand holds for `folder` begins with (then its command
    and a random part: any number of them at once, none guessable by another user)."""
    return b"\0sacscale-training-lock-shared-" + _digest(folder, "shared") + b"-"


def _digest(folder: str, tag: str) -> bytes:
    spelled = os.path.normpath(folder)
    if spelled.startswith("//"):  # normpath keeps a leading "//" (POSIX leaves it open); Linux does not
        spelled = "/" + spelled.lstrip("/")
    key = f"{os.getuid()}\0{spelled}\0{tag}".encode("utf-8", "surrogateescape")
    return hashlib.sha256(key).hexdigest()[:32].encode()


class _NoAbstractSockets(Exception):
    """Binding an abstract name failed otherwise than by its being taken."""


def hold(folder: str) -> tuple[socket.socket | None, int | None]:
    """(the bound socket, None) when this process now holds a machine-wide name for the lock
    folder `folder`, (None, the holder's pid, 0 where its PID namespace hides it) when a
    process of this user holds one, (None, None) where abstract sockets are not to be had
    (not Linux), their owners cannot be read, or another user holds every name of the series
    (the last two said on stderr)."""
    if sys.platform != "linux":
        return None, None
    names = [socket_name(folder, index) for index in range(SERIES)]
    try:
        for name in names:
            taken = _take(name)
            if isinstance(taken, socket.socket):
                return _keep_if_alone(taken, names, name)
            if taken is not None:
                return None, taken
    except _NoAbstractSockets:
        return None, None
    except socket_owners.ListingUnavailable as exc:
        _say_off(folder, f"cannot tell who holds its machine-wide names: {exc}")
        return None, None
    _say_off(folder, f"another user's processes hold all {SERIES} of its machine-wide names",
             "; find and stop those processes (ss -xap | grep sacscale-training-lock)")
    return None, None


def _say_off(folder: str, why: str, cure: str = "") -> None:
    print(f"sacscale: this machine's training lock ({folder}): {why}, so a run in another mount namespace (a "
          f"private /tmp) will not be refused (the lock file still holds in this one){cure}", file=sys.stderr)


def _take(name: bytes) -> socket.socket | int | None:
    """The socket now bound to `name`, the pid of this user's process holding it, or None where
    another user's process holds it."""
    for _ in range(2):  # a holder that exits between our bind and our look is not a holder
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)  # not inherited by the run's processes
        try:
            sock.bind(name)  # bound, never listening: nobody can connect to it, nor fill a queue
            return sock
        except OSError as exc:
            sock.close()
            if exc.errno != errno.EADDRINUSE:
                raise _NoAbstractSockets from exc
        owner = socket_owners.bound({name}).get(name)
        if owner is not None:
            return _ours(*owner)
    return None


def _keep_if_alone(sock: socket.socket, names: list[bytes], own: bytes) -> tuple[socket.socket | None, int | None]:
    """Keep `sock` unless a process of this user holds another name of the series: one that
    took a later name while an earlier one was another user's (since let go), or one binding
    beside us now (each looks after binding, so at least one of two sees the other)."""
    try:
        owners = socket_owners.bound(set(names) - {own})
    except socket_owners.ListingUnavailable:
        sock.close()
        raise
    return _kept_unless_held(sock, names, owners)


def _kept_unless_held(sock: socket.socket, names: list[bytes], owners: dict) -> tuple[socket.socket | None, int | None]:
    """(sock, None), or (None, the pid) of this user's first process holding one of `names`
    (its owners as socket_owners.bound gives them), `sock` then let go."""
    for name in names:
        pid = _ours(*owners[name]) if name in owners else None
        if pid is not None:
            sock.close()
            return None, pid
    return sock, None


def _ours(inode: int, uid: int) -> int | None:
    """The pid of the process of this user holding socket `inode` (0 where it cannot be seen from
    here), or None where the socket is another user's."""
    return socket_owners.pid_holding(inode) if uid == os.getuid() else None


def hold_shared(folder: str, command: str) -> tuple[socket.socket | None, int | None]:
    """For `sacscale COMMAND` run by hand: (the bound socket, None) once this process holds a
    name of the shared series for `folder`, (None, the pid, 0 where hidden) of this user's
    measured run holding a name of the exclusive series, (None, None) where the machine-wide
    hold is off (as for `hold`). Binds before it looks, as a measured run does, so that of a
    hand-run command and a measured run starting together at least one sees the other."""
    if sys.platform != "linux" or not _COMMAND.fullmatch(command):
        return None, None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(shared_prefix(folder) + f"{command}-{secrets.token_hex(_RANDOM_BYTES)}".encode())
    except OSError:  # no abstract sockets here: a random name is taken by nobody
        sock.close()
        return None, None
    names = [socket_name(folder, index) for index in range(SERIES)]
    try:
        owners = socket_owners.bound(set(names))
    except socket_owners.ListingUnavailable as exc:
        sock.close()
        _say_off(folder, f"cannot tell who holds its machine-wide names: {exc}")
        return None, None
    return _kept_unless_held(sock, names, owners)


def hand_run_holder(folder: str) -> tuple[int, str | None] | None:
    """(pid, 0 where hidden; its command, None where the name does not say one) of a process of
    this user holding a name of the shared series for `folder` (a command run by hand), else None
    (also where the listing cannot be read: said)."""
    prefix = shared_prefix(folder)
    try:
        owners = socket_owners.bound_under(prefix)
    except socket_owners.ListingUnavailable as exc:
        _say_off(folder, f"cannot tell who holds its machine-wide names: {exc}")
        return None
    for name, owner in sorted(owners.items()):
        pid = _ours(*owner)
        if pid is not None:
            command = name[len(prefix):].rpartition(b"-")[0].decode("ascii", "replace")
            return pid, command if _COMMAND.fullmatch(command) else None
    return None
