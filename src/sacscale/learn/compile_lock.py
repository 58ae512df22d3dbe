"""One first update (compile, warm-up, CUDA-graph capture) at a time per GPU.

Two trainers that shared one GPU and compiled at once with a cold compile cache both
died with a device-side assert; with a warm cache the same pair ran (docs/faults.md,
"two trainers on one GPU"). The cause was not isolated, so the situation is made
impossible instead: a trainer holds an exclusive lock on a per-GPU file while its first
update runs. A second trainer on the same GPU waits (a bounded time), then finds the
cache warm. Ranks of one job use different GPUs, so they never wait for each other
(their warm-ups all-reduce, a shared lock would deadlock them). The kernel drops the
lock when its holder exits, however it exits.

The lock files live in a folder of this user's own (mode 0700, checked for its owner
and that it is no link): a folder every user may write, such as /tmp itself, would let
another user plant a link where the lock file goes, or hold the lock forever. So the
lock serialises the trainers of one user; another user's trainers on the same GPU are
not seen (docs/faults.md says so). The same primitive (`private_lock`) holds the
pipeline's machine-wide training lock (sacscale.pipeline.machine_lock).

Not the `filelock` package: the lock itself is one `flock`, and what matters here is
around it (the private folder checked on its open descriptor, the holder recorded and
named from parsed fields, a stop check while waiting), which that package does not do
for us; its own fallbacks (soft locks, mode changes) would be more to audit, not less.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

POLL_S = 0.2
# A cold first update takes 7-40 s on one H200; a wait far past that means the holder is
# stuck (or a debugger holds it), and the trainer should say so rather than wait for ever.
FIRST_UPDATE_WAIT_S = 1800.0
_HOLDER_BYTES = 256
_RUN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")


class LockError(RuntimeError):
    """The lock could not be taken safely, or not within its bound; the message names the
    lock file and, where known, its holder."""


class LockHeld(LockError):
    """Another process held the lock past the wait allowed."""


def lock_dir() -> Path:
    """Where the lock files live: SACSCALE_LOCK_DIR, else `sacscale-<uid>` in the system's
    temporary folder (one per user and host)."""
    configured = os.environ.get("SACSCALE_LOCK_DIR")
    if configured:
        return Path(configured)
    return Path(tempfile.gettempdir()) / f"sacscale-{os.getuid()}"


def _open_private_dir(path: Path) -> int:
    """A descriptor of `path` (created with mode 0700 when missing). Refused unless it is a
    directory, not a link, owned by this user and writable by no one else; the checks are
    made on the opened descriptor, so the folder cannot be swapped between check and use."""
    try:
        os.mkdir(path, 0o700)  # only the last component: a missing parent is the user's to make
    except FileExistsError:
        pass
    except OSError as exc:
        raise LockError(f"lock folder {path}: cannot create it ({exc.strerror}); set SACSCALE_LOCK_DIR to a "
                        "folder of your own") from None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        raise LockError(f"lock folder {path}: not a directory of this user's ({exc.strerror}; a symbolic link "
                        "is refused); set SACSCALE_LOCK_DIR to a folder of your own") from None
    st = os.fstat(fd)
    problem = None
    if st.st_uid != os.getuid():
        problem = f"belongs to uid {st.st_uid}, not to this user (uid {os.getuid()})"
    elif st.st_mode & 0o022:
        problem = f"is writable by other users (mode {stat.S_IMODE(st.st_mode):04o})"
    if problem:
        os.close(fd)
        raise LockError(f"lock folder {path} {problem}; another user could plant or hold its lock files: "
                        "remove it, or set SACSCALE_LOCK_DIR to a folder of your own (mode 0700)")
    return fd


def _open_lock_file(dir_fd: int, name: str, path: Path) -> int:
    """The lock file, created (0600) when missing; never through a link, never anything but
    a plain file of this user's with one name. Its mode is left as it is."""
    flags = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(name, flags, 0o600, dir_fd=dir_fd)
    except OSError as exc:
        raise LockError(f"lock file {path}: cannot open it ({exc.strerror}; a symbolic link is refused)") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() or st.st_nlink != 1:
        os.close(fd)
        raise LockError(f"lock file {path}: not a plain file of this user's with a single name; remove it")
    return fd


def describe_holder(raw: bytes) -> str:
    """Who holds a lock, from what the holder wrote (`pid N[ run NAME][ set NAME]`), rebuilt
    from the parsed fields only: nothing the file holds reaches the terminal as written."""
    words = raw.decode("ascii", errors="replace").split()
    if len(words) < 2 or words[0] != "pid" or not (words[1].isdigit() and len(words[1]) <= 10):
        return "another process"
    fields = dict(zip(words[2::2], words[3::2]))
    named = [f"{key} {fields[key]}" for key in ("run", "set") if _RUN_NAME.fullmatch(fields.get(key, ""))]
    return f"pid {int(words[1])}" + (f" ({', '.join(named)})" if named else "")


def _holder(fd: int) -> str:
    return describe_holder(os.pread(fd, _HOLDER_BYTES, 0))


def _try_lock(fd: int, path: Path) -> bool:
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError as exc:  # a file system without locks (some network mounts)
        raise LockError(f"lock file {path}: cannot lock it ({exc.strerror}); set SACSCALE_LOCK_DIR to a local "
                        "folder of your own") from None
    return True


@contextlib.contextmanager
def private_lock(name: str, what: str, wait_s: float, check_stop: Callable[[], None] | None = None,
                 say: Callable[[str], None] | None = None, note: str = "") -> Iterator[float]:
    """Hold `<lock_dir>/<name>` exclusively; yields the seconds spent waiting. Waits at most
    `wait_s` (0: not at all), then raises LockError naming `what`, the file and its holder.
    While waiting, `check_stop()` runs every POLL_S and `say` is told once whom we wait for.
    `note` (e.g. `run NAME`) is recorded beside our pid for the next process to name."""
    directory = lock_dir()
    path = directory / name
    dir_fd = _open_private_dir(directory)
    try:
        fd = _open_lock_file(dir_fd, name, path)
    finally:
        os.close(dir_fd)
    t0 = time.monotonic()
    try:
        told = False
        while not _try_lock(fd, path):
            waited = time.monotonic() - t0
            if waited >= wait_s:
                how = "is" if wait_s <= 0 else f"was still, after {waited:.0f} s,"
                raise LockHeld(f"{what} {how} held by {_holder(fd)} ({path})")
            if not told and say is not None:
                say(f"waiting for {_holder(fd)} ({what}; {path}; at most {wait_s:.0f} s)")
                told = True
            if check_stop is not None:
                check_stop()
            time.sleep(POLL_S)
        record = f"pid {os.getpid()}" + (f" {note}" if note else "") + "\n"
        os.ftruncate(fd, 0)
        os.pwrite(fd, record.encode("ascii", errors="replace"), 0)
        yield time.monotonic() - t0
    finally:
        os.close(fd)  # releases the lock


def gpu_key(device) -> str:
    """A name for the physical GPU behind `device`, the same in every process that sees
    it (its UUID; CUDA_VISIBLE_DEVICES renumbers indices, so an index is the fallback)."""
    import torch

    index = device.index if device.index is not None else torch.cuda.current_device()
    props = torch.cuda.get_device_properties(index)
    uuid = str(getattr(props, "uuid", "") or "")
    if uuid:
        return "gpu-" + re.sub(r"[^A-Za-z0-9-]", "", uuid)
    visible = re.sub(r"[^0-9A-Za-z-]", "_", os.environ.get("CUDA_VISIBLE_DEVICES", "all"))
    return f"gpu-visible{visible}-index{index}"


def exclusive(key: str, check_stop: Callable[[], None] | None = None,
              say: Callable[[str], None] | None = None, wait_s: float = FIRST_UPDATE_WAIT_S):
    """The first-update lock of GPU `key`: `<lock_dir>/sacscale-first-update-<key>.lock`."""
    key = re.sub(r"[^A-Za-z0-9_.-]", "_", key)  # a file name, whatever the device calls itself
    return private_lock(f"sacscale-first-update-{key}.lock", "the first-update lock of this GPU", wait_s,
                        check_stop, say)


def first_update_lock(device, check_stop: Callable[[], None] | None = None):
    """`exclusive` for a CUDA device's first update; a no-op context on CPU."""
    if getattr(device, "type", str(device)) != "cuda":
        return contextlib.nullcontext(0.0)
    return exclusive(gpu_key(device), check_stop, say=lambda msg: print(f"sacscale: {msg}", file=sys.stderr,
                                                                           flush=True))
