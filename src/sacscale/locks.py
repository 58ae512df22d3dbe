"""An exclusive lock in this user's private lock folder, waited for within a bound.

`private_lock` holds `<lock_dir>/<name>` with one `flock`. The folder is this user's own
(sacscale.lock_folder: created 0700; its owner, its mode and that it is no link checked on the opened
descriptor), the lock file is opened through that descriptor without following a link and
is never chmod'ed; one removed while held is made and locked again at once; the wait is
bounded and ends in a LockError that names the holder from the fields it recorded (never
its bytes as written), and a stop check runs while waiting.
docs/faults.md lists these as guarantees. The pipeline's machine-wide training lock
(sacscale.pipeline.machine_lock) uses it.

`lock_beside` holds the lock of one folder, `.<name>.lock` beside it, the same way (one
flock, the file opened through its folder's descriptor, never through a link, a plain
file of this user's), without waiting, and removes the file while still holding it: a
folder of evidence keeps no file of ours. A holder killed before it could remove the file
left one that nobody holds (the kernel drops a flock with its process): the next takes it.
A held one that another user owns or may write (sacscale.atomic.others_can_write_file) is no
holder's word: `holder_beside` and `lock_beside` raise UntrustedLock, showing nothing it holds.
A folder may have more than one such lock, each its own file (`.<name><ending>`): a trainer's
run folder lock (`.<name>.trainer-lock`) is not record-run's (`.<name>.lock`). A name too long
for the file system with its lock's dot and ending is cut, with a digest of it
(sacscale.long_names), so every name the file system allows has a lock.

Not the `filelock` package (4.3.2, read for this): it opens the lock file by path (with
O_NOFOLLOW, but not through a folder descriptor checked first, and it takes no descriptor
of ours), does not check the file's owner or link count, chmods the file when given a
mode, falls back to soft locks where flock is missing unless told not to, and has no stop
check while it waits; keeping these properties around it would be more code to audit than
the one flock below.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import stat
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from sacscale.atomic import others_can_write_file, refuse_foreign_links
from sacscale.lock_names import LOCK, TRAINER_LOCK  # noqa: F401 (the lock endings, used through this module too)
from sacscale.long_names import name_that_fits
from sacscale.lock_folder import (  # noqa: F401 (the lock folder's names, used through this module too)
    DEFAULT_BASE,
    LOCK_DIR_VARIABLE,
    LockError,
    LockSettingError,
    lock_dir,
    open_private_dir,
    private_folder,
    unusable,
)

POLL_S = 0.2
_HOLDER_BYTES = 256
_RUN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
# how a holder that took a lock shared is named (describe_holder): a command outside a measured
# run, started by hand or as a pipeline's probe stage (which of the two, the record does not say)
SHARED_HOLDER = "not a measured run"
# the field a holder adds to its record in a lock file it made again after its own was removed
_REMADE = "remade"


class LockHeld(LockError):
    """Another process held the lock past the wait allowed."""


class HeldBeside(LockHeld):
    """Another process holds the lock of a folder (`lock_beside`): `holder` names it (`pid N`,
    or `another process` before it has recorded itself), `lock` is the lock file. The pid is
    for the user to read, never to judge whose the lock is: it is the holder's number in the
    holder's PID namespace (another container, or another host on a shared file system), so
    the same number here may be any process; only the kernel's flock says who holds it."""

    def __init__(self, lock: Path, holder: str):
        super().__init__(f"{lock} is held by {holder}")
        self.lock, self.holder = lock, holder


class UntrustedLock(LockError):
    """A folder's lock file (`lock_beside`) is held, but another user owns it or may write
    it: what it says of its holder is anyone's word, and no lock this user's sacscale takes."""


def _open_lock_file(dir_fd: int, name: str, path: Path) -> int:
    """The lock file, created (0600) when missing; never through a link, never anything but
    a plain file of this user's with one name. Its mode is left as it is."""
    flags = os.O_RDWR | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        try:
            fd = os.open(name, flags | os.O_CREAT | os.O_EXCL, 0o600, dir_fd=dir_fd)
            os.fchmod(fd, 0o600)  # ours, just made: under umask 0777 it would be 0000 for the next process
        except FileExistsError:
            fd = os.open(name, flags, dir_fd=dir_fd)
    except OSError as exc:
        if exc.errno == errno.EACCES:
            owner = _owner(path)
            raise LockError(_planted(path, owner) if owner not in (None, os.getuid()) else
                            f"lock file {path}: {unusable(path, exc)}", exc.errno) from None
        # O_NOFOLLOW gives ELOOP for a link; another reason (an immutable file: EPERM) is said as it is
        link = "; a symbolic link is refused" if exc.errno == errno.ELOOP else ""
        # the errno goes with it: a disk out of inodes or read-only is named as the output's write
        raise LockError(f"lock file {path}: cannot open it ({exc.strerror}{link})", exc.errno) from None
    st = os.fstat(fd)
    if st.st_uid != os.getuid():
        os.close(fd)
        raise LockError(_planted(path, st.st_uid))
    if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
        os.close(fd)
        raise LockError(f"lock file {path}: not a plain file of this user's with a single name; remove it")
    return fd


def _owner(path: Path) -> int | None:
    try:
        return os.lstat(path).st_uid
    except OSError:
        return None


def _planted(path: Path, uid: int) -> str:
    """Another user's file at our lock's name. Refused, neither used nor removed (root could
    remove it): they could put it only in a folder they can write in (a shared one such as
    /tmp), where they could as well plant or swap the output it guards; taking theirs away
    would hide that, not make the place safe. The way out is a folder of the user's own."""
    return (f"lock file {path}: belongs to uid {uid}, another user, who put it in a folder they can write in, "
            "where they could plant the output as well; write it in a folder of your own")


def describe_holder(raw: bytes) -> str:
    """Who holds a lock, from what the holder wrote (`pid N[ run NAME][ set NAME]`), rebuilt
    from the parsed fields only: nothing the file holds reaches the terminal as written."""
    words = raw.decode("ascii", errors="replace").split()
    if len(words) < 2 or words[0] != "pid" or not (words[1].isdigit() and len(words[1]) <= 10):
        return "another process"
    fields = dict(zip(words[2::2], words[3::2]))
    if _RUN_NAME.fullmatch(fields.get("hand", "")):  # a command outside a measured run, holding the lock shared
        return f"`sacscale {fields['hand']}` (pid {int(words[1])}; {SHARED_HOLDER})"
    named = [f"{key} {fields[key]}" for key in ("run", "set") if _RUN_NAME.fullmatch(fields.get(key, ""))]
    remade = ", which made this lock file again after the one it held was removed" if fields.get(_REMADE) == "1" else ""
    return f"pid {int(words[1])}" + (f" ({', '.join(named)})" if named else "") + remade


def _holder(fd: int) -> str:
    return describe_holder(os.pread(fd, _HOLDER_BYTES, 0))


def _record_holder(fd: int, path: Path, record: str, elsewhere: str) -> None:
    """Who holds the lock, for the next process to name; a full or failing disk under the
    lock folder is named with the file rather than escaping as a bare OSError."""
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, record.encode("ascii", errors="replace"), 0)
    except OSError as exc:
        raise LockError(f"lock file {path}: cannot record its holder ({exc.strerror or exc}); free space there "
                        f"or {elsewhere}", exc.errno) from None


def _try_lock(fd: int, path: Path, elsewhere: str, how: int = fcntl.LOCK_EX) -> bool:
    try:
        fcntl.flock(fd, how | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError as exc:  # a file system without locks (some network mounts)
        raise LockError(f"lock file {path}: cannot lock it ({exc.strerror}); {elsewhere}") from None
    return True


def _names_it(dir_fd: int, name: str, fd: int) -> bool:
    """Whether `name` in the folder is still the file `fd` holds (not removed or replaced)."""
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return False
    held = os.fstat(fd)
    return (st.st_dev, st.st_ino) == (held.st_dev, held.st_ino)


def _lock_named(dir_fd: int, name: str, path: Path, variable: str = LOCK_DIR_VARIABLE,
                how: int = fcntl.LOCK_EX) -> int | None:
    """A descriptor of the lock file, locked (`how`: exclusively, or shared), that its name
    still names; None when it is held. A file removed between our open and our lock is opened again."""
    while True:
        fd = _open_lock_file(dir_fd, name, path)
        try:
            if not _try_lock(fd, path, f"set {variable} to a local folder of your own", how):
                os.close(fd)
                return None
        except BaseException:
            os.close(fd)
            raise
        if _names_it(dir_fd, name, fd):
            return fd
        os.close(fd)


def _same_folder(directory: Path, dir_fd: int) -> bool:
    """Whether `directory` still names the folder `dir_fd` holds (not removed or replaced)."""
    try:
        st = os.stat(directory, follow_symlinks=False)
    except OSError:
        return False
    held = os.fstat(dir_fd)
    return (st.st_dev, st.st_ino) == (held.st_dev, held.st_ino)


def _keep_named(directory: Path, dir_fd: int, name: str, path: Path, fd: int, record: str,
                stop: threading.Event, variable: str) -> None:
    """While held: a lock file removed by hand or by a /tmp cleaner, or its whole folder
    (`rm -rf /tmp/sacscale-*`), would let the next process make a new one and hold it too,
    so a new one (and folder) is made and locked at once (within POLL_S * 5) and every lock
    taken so is kept until release."""
    pinned, folders = [fd], [dir_fd]
    try:
        while not stop.wait(POLL_S * 5):
            if not _same_folder(directory, folders[-1]):
                try:
                    folders.append(open_private_dir(directory, variable))
                except LockError:
                    continue
            if _names_it(folders[-1], name, pinned[-1]):
                continue
            try:
                again = _lock_named(folders[-1], name, path, variable)
            except LockError:
                continue
            if again is not None:
                pinned.append(again)
                with contextlib.suppress(LockError):  # marked: the next process names this file as made again
                    _record_holder(again, path, f"{record.rstrip()} {_REMADE} 1\n",
                                   f"set {variable} to another folder of your own")
    finally:
        for extra in pinned[1:] + folders[1:]:
            os.close(extra)


@contextlib.contextmanager
def private_lock(name: str, what: str, wait_s: float, check_stop: Callable[[], None] | None = None,
                 say: Callable[[str], None] | None = None, note: str = "",
                 variable: str = LOCK_DIR_VARIABLE, held: Callable[[int], None] | None = None,
                 refused_by: tuple[type[BaseException], ...] = ()) -> Iterator[float]:
    """Hold `<lock_dir(variable)>/<name>` exclusively; yields the seconds spent waiting. Waits
    at most `wait_s` (0: not at all), then raises LockError naming `what`, the file and its holder.
    While waiting, `check_stop()` runs every POLL_S and `say` is told once whom we wait for.
    `note` (e.g. `run NAME`) is recorded beside our pid for the next process to name; `held`
    is given the locked descriptor (to hand on to a child, whose hold it then is too). Where the
    body raises one of `refused_by` (a refusal found under the lock), the lock file and folder
    this call made are removed: a refused command leaves nothing behind."""
    if not 0 <= wait_s < float("inf"):  # nan compares false with every waited time: no bound at all
        raise LockError(f"{what}: a wait of {wait_s!r} s is no bound; give a finite number of seconds >= 0")
    directory = lock_dir(variable)
    path = directory / name
    folder_was_there = os.path.lexists(directory)
    dir_fd = open_private_dir(directory, variable)
    made = _made_here(dir_fd, name, None if folder_was_there else directory)
    t0 = time.monotonic()
    try:
        told = False
        while (fd := _lock_named(dir_fd, name, path, variable)) is None:
            waited = time.monotonic() - t0
            if waited >= wait_s:
                how = "is" if wait_s <= 0 else f"was still, after {waited:.0f} s,"
                raise LockHeld(f"{what} {how} held by {_holder_of(dir_fd, name, path)} ({path})")
            if not told and say is not None:
                say(f"waiting for {_holder_of(dir_fd, name, path)} ({what}; {path}; at most {wait_s:.0f} s)")
                told = True
            if check_stop is not None:
                check_stop()
            time.sleep(POLL_S)
        record = f"pid {os.getpid()}" + (f" {note}" if note else "") + "\n"
        stop = threading.Event()
        try:
            try:
                _record_holder(fd, path, record, f"set {variable} to another folder of your own")
            except LockError:  # a full disk: what this lock made there is removed, nothing left
                _remove_unrecorded(dir_fd, name, None if folder_was_there else directory)
                raise
            keeper = threading.Thread(target=_keep_named, daemon=True,
                                      args=(directory, dir_fd, name, path, fd, record, stop, variable))
            keeper.start()
            try:
                if held is not None:
                    held(fd)
                yield time.monotonic() - t0
            except refused_by:  # refused under it: what this call made is removed, the keeper stopped first
                stop.set()
                keeper.join()
                made(fd)
                raise
            finally:
                stop.set()
                keeper.join()
        finally:
            os.close(fd)  # releases the lock
    finally:
        os.close(dir_fd)


@contextlib.contextmanager
def shared_private_lock(name: str, what: str, note: str, variable: str = LOCK_DIR_VARIABLE,
                        refused_by: tuple[type[BaseException], ...] = ()) -> Iterator[None]:
    """Hold `<lock_dir(variable)>/<name>` shared, without waiting: beside other shared holders,
    never beside an exclusive one (private_lock), which raises LockHeld naming it. `note` is
    recorded beside our pid (the last shared holder's is the one named). Where the body raises
    one of `refused_by`, the lock file and folder this call made are removed, unless another
    process shares the file by then (private_lock's `refused_by`)."""
    directory = lock_dir(variable)
    path = directory / name
    folder_was_there = os.path.lexists(directory)
    dir_fd = open_private_dir(directory, variable)
    made = _made_here(dir_fd, name, None if folder_was_there else directory)
    try:
        fd = _lock_named(dir_fd, name, path, variable, fcntl.LOCK_SH)
        if fd is None:
            raise LockHeld(f"{what} is held by {_holder_of(dir_fd, name, path)} ({path})")
        try:
            _record_holder(fd, path, f"pid {os.getpid()} {note}\n", f"set {variable} to another folder of your own")
            yield
        except refused_by:
            made(fd)
            raise
        finally:
            os.close(fd)  # releases our share
    finally:
        os.close(dir_fd)


def _made_here(dir_fd: int, name: str, folder: Path | None) -> Callable[[int], None]:
    """What removes, given the locked descriptor, the lock file `name` this call is about to make
    (none there yet) and the lock folder `folder` it made (None: it was there), where it holds
    the file alone (a share converted without waiting): one shared or taken meanwhile is left."""
    file_was_there = _exists(dir_fd, name)

    def remove(fd: int) -> None:
        if file_was_there:  # another's, or an earlier run's: left as found (its folder too)
            return
        try:
            alone = _try_lock(fd, Path(name), "", fcntl.LOCK_EX)
        except LockError:
            alone = False
        if alone and _names_it(dir_fd, name, fd):
            _remove_unrecorded(dir_fd, name, folder)
    return remove


def _exists(dir_fd: int, name: str) -> bool:
    try:
        return os.stat(name, dir_fd=dir_fd, follow_symlinks=False) is not None
    except FileNotFoundError:
        return False


def _remove_unrecorded(dir_fd: int, name: str, made: Path | None) -> None:
    """The lock file whose holder could not be recorded removed, while still held (the next
    process, finding it gone, opens a new one), and the lock folder `made` for it, if empty."""
    with contextlib.suppress(OSError):
        os.unlink(name, dir_fd=dir_fd)
    if made is not None:
        with contextlib.suppress(OSError):
            os.rmdir(made)


def _holder_of(dir_fd: int, name: str, path: Path) -> str:
    fd = _open_lock_file(dir_fd, name, path)
    try:
        return _holder(fd)
    finally:
        os.close(fd)


# what to do where the folder's own file system cannot hold its lock
_BESIDE = "use a folder on a local disk"


# set by record-run for the command it starts: the work folder (real path) whose lock it
# holds, so that its own trainer there is not refused by it as another's would be
RECORDED_IN_VARIABLE = "SACSCALE_RECORD_RUN_WORK_DIR"


def lock_file_beside(folder: Path, ending: str = LOCK) -> Path:
    """The lock file of `folder`: `.<name><ending>` in the same parent, the folder's whole name
    kept (`.NAME.partial` has `..NAME.partial.lock`): folders `x` and `.x` are two folders,
    with a lock each (one name for both refused a report into one while one ran into the other).
    A name too long for that is cut with a digest of it (long_names.name_that_fits)."""
    return folder.parent / name_that_fits(folder.parent, ".", folder.name, ending)


def _open_parent(lock: Path) -> int:
    """A descriptor of the folder that holds `lock`, made when missing; never reached through
    another user's symbolic link."""
    try:
        refuse_foreign_links(lock)
        lock.parent.mkdir(parents=True, exist_ok=True)
        return os.open(lock.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise LockError(f"lock file {lock}: {exc.strerror or exc} ({exc.filename or lock.parent})",
                        exc.errno) from None


def _take_named(dir_fd: int, name: str, path: Path, guarded: str) -> tuple[int | None, str]:
    """As _lock_named, without waiting: (the locked descriptor, "") or, when another process
    holds it, (None, the holder as read from the very file it holds: opening it by name
    again could make a new one after the holder removed it)."""
    while True:
        fd = _open_lock_file(dir_fd, name, path)
        try:
            if not _try_lock(fd, path, _BESIDE):
                holder = _trusted_holder(fd, path, guarded)
                os.close(fd)
                return None, holder
        except BaseException:
            os.close(fd)
            raise
        if _names_it(dir_fd, name, fd):
            return fd, ""
        os.close(fd)


# (device, inode) of each lock file lock_beside holds in this process: a look at a lock it
# holds itself (holder_beside) finds no other holder
_HELD_HERE: set[tuple[int, int]] = set()


@contextlib.contextmanager
def lock_beside(folder: Path, ending: str = LOCK) -> Iterator[Path]:
    """Hold `folder`'s lock file (lock_file_beside with `ending`) exclusively; yields its path.
    Not waited for: another holder raises HeldBeside at once; an unsafe file (a link, another
    user's, one with two names) or folder raises LockError. On release the file is removed while
    still held; a process that locked it meanwhile finds its name gone and makes a new one."""
    lock = lock_file_beside(folder, ending)
    dir_fd = _open_parent(lock)
    try:
        fd, holder = _take_named(dir_fd, lock.name, lock, folder.name)
        if fd is None:
            raise HeldBeside(lock, holder)
        st = os.fstat(fd)
        _HELD_HERE.add((st.st_dev, st.st_ino))
        try:
            _record_holder(fd, lock, f"pid {os.getpid()}\n", _BESIDE)
            yield lock
        finally:
            _HELD_HERE.discard((st.st_dev, st.st_ino))
            if _names_it(dir_fd, lock.name, fd):
                with contextlib.suppress(OSError):
                    os.unlink(lock.name, dir_fd=dir_fd)
            os.close(fd)  # releases the lock, after the removal
    finally:
        os.close(dir_fd)


def holder_beside(folder: Path, ending: str = LOCK, others_only: bool = False) -> str | None:
    """Who holds `folder`'s lock (lock_beside with `ending`) now, or None: read without making
    or taking it (a shared lock tried and let go at once), so a look never refuses the holder's
    rival; with `others_only`, None too where this process holds it (a trainer looking at its
    own folder). A held file another user owns or may write raises UntrustedLock: its text is
    not shown."""
    return holder_of_lock_file(lock_file_beside(folder, ending), folder.name, others_only)


def holder_of_lock_file(lock: Path, guarded: str, others_only: bool = False) -> str | None:
    """holder_beside for a lock file found by its own path (a look through a folder's tree);
    `guarded` names what it guards in an UntrustedLock's words."""
    try:
        fd = os.open(lock, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if others_only and (st.st_dev, st.st_ino) in _HELD_HERE:
            return None
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return _trusted_holder(fd, lock, guarded)
    except OSError:
        return None
    finally:
        os.close(fd)  # also lets go of a shared lock just taken
    return None


def _trusted_holder(fd: int, lock: Path, guarded: str) -> str:
    """The holder a held lock file names, where only this user (or root) could have written
    it; UntrustedLock naming the file as another user's otherwise, as the output locks do."""
    st = os.fstat(fd)
    problem = others_can_write_file(st, f"/proc/self/fd/{fd}")  # the opened file's own access list
    if problem is None:
        return _holder(fd)
    if st.st_uid not in (os.getuid(), 0):
        problem += ", who put it in a folder they can write in"
    raise UntrustedLock(f"lock file {lock}: {problem}; it is held, but not as a lock of this user's sacscale, and "
                        f"what it says of its holder is not shown (another user could have written it); keep "
                        f"{guarded} in a folder of your own")
