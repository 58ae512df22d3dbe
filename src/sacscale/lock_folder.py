"""The private lock folder: `<lock_dir>` (SACSCALE_LOCK_DIR, or the machine lock's variable,
else `/tmp/sacscale-<uid>`), a folder of this user's own, made 0700 and checked on its opened
descriptor (owner, mode, no link, no folder above it another user can swap, not inside a
finished run set), and the folders kept in it (`private_folder`). sacscale.locks takes its
locks there; the errors are shared with it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

from sacscale.atomic import placed, swappable_by_others
from sacscale.finished_sets import described, finished_set_holding
from sacscale.held_names import encoding_holds_any_name, unheld_path_problem

# The default lock folder's parent: the system's temporary folder as every process of the
# machine names it. Not TMPDIR: a shell under a batch system or tmux has its own TMPDIR,
# and two pipeline invocations that each follow theirs would hold two locks, train at once
# and skew both sets' measurements (docs/faults.md row 27).
DEFAULT_BASE = Path("/tmp")


class LockError(RuntimeError):
    """The lock could not be taken safely, or not within its bound; the message names the
    lock file and, where known, its holder. `errno`: the file system's refusal behind it, if
    any (a full disk is then named as the output's own write would name it)."""

    def __init__(self, message: str, errno: int | None = None):
        super().__init__(message)
        self.errno = errno


class LockSettingError(LockError):
    """SACSCALE_LOCK_DIR (or the machine lock's variable) as set cannot name a lock folder:
    the user's input, not the machine's state."""


# the variable that moves the lock folder (private_folder's, private_lock's unless told another)
LOCK_DIR_VARIABLE = "SACSCALE_LOCK_DIR"


def lock_dir(variable: str = LOCK_DIR_VARIABLE) -> Path:
    """Where the lock files live: the folder `variable` names, else `sacscale-<uid>` in /tmp
    (one per user and host, whatever TMPDIR says). A relative one is refused: it would be
    another folder, so another lock, in every working directory."""
    configured = os.environ.get(variable)
    if configured:
        if not os.path.isabs(configured):
            raise LockSettingError(f"{variable}={configured!r} is a relative path (a different lock folder "
                                   "in each working directory); give an absolute one")
        if passed := per_process_entry(configured):
            at = "" if passed == "/proc" else f" (by {passed})"
            raise LockSettingError(f"{variable}={configured!r} leads through /proc{at}, whose names (/proc/self, "
                                   "/proc/<pid>, /dev/fd, ...) each process resolves to its own folders: a different "
                                   "lock folder in each process or working directory; give the folder's own "
                                   "absolute name")
        if not encoding_holds_any_name() and (problem := unheld_path_problem(variable, configured)):
            raise LockSettingError(problem)  # not a "control character": a plain letter the encoding lacks
        bad = next((c for c in configured if not c.isprintable()), None)
        if bad is not None:  # a newline splits every message and record that names the folder
            raise LockSettingError(f"{variable}={configured!r} holds a control or invisible character "
                                   f"({bad!r}); give a folder whose name is plain text")
        _refuse_a_finished_set(Path(configured), variable)
        return Path(configured)
    return DEFAULT_BASE / f"sacscale-{os.getuid()}"


_LINKS_FOLLOWED = 40  # the kernel's own limit: a name through more links fails to open anyway


def per_process_entry(path: str) -> str | None:
    """The entry of the absolute `path` by which the kernel's walk to it enters procfs and
    resolves a per-process name there: the procfs mount (/proc, or any other proc mount), or
    the link of the user's that leads there (/dev/fd), else None. Such a name
    (/proc/self/cwd/x, /proc/<pid>/root/x, /dev/fd/3/x) is absolute by its text but each
    process resolves it by its own working folder, root or descriptors. Refused rather than
    resolved once: every process that reads the variable (each job, each invocation) would
    resolve it again, each to its own folder. A walk that leaves procfs by `..` before
    following any of its links (/proc/../tmp) names one folder for every process."""
    procfs = _procfs_devices()
    if not procfs:  # no procfs: no per-process names either
        return None
    return _entry_on(path, procfs)


def _procfs_devices() -> frozenset[int]:
    """The devices of every procfs mount this process sees (each mount of it has its own
    device, so /proc's alone would miss a second one such as a host's /host/proc)."""
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as lines:
            mounts = [line.split(" - ", 1) for line in lines]
    except OSError:
        return frozenset()
    devices = set()
    for fields, kind in (m for m in mounts if len(m) == 2):
        if kind.split(" ", 1)[0] == "proc":
            major, _, minor = fields.split()[2].partition(":")
            devices.add(os.makedev(int(major), int(minor)))
    return frozenset(devices)


def _entry_on(path: str, procfs: frozenset[int]) -> str | None:
    """Walk `path` as the kernel does (links replaced by their targets in place, `..` not
    collapsed): the procfs entry (or the user's link that led to it) once a link inside
    procfs is followed or the walk ends inside procfs; None when it never enters procfs or
    leaves it again first."""
    pending = [(part, None) for part in Path(path).parts[1:]]  # (component, the user's link it comes from)
    prefix, entered, links = "/", None, 0
    while pending:
        part, via = pending.pop(0)
        prefix = os.path.join(prefix, part)
        try:
            st = os.lstat(prefix)
        except OSError:
            break  # missing from here on: nothing further is walked
        inside = st.st_dev in procfs
        entered = (entered or via or prefix) if inside else None
        if not stat.S_ISLNK(st.st_mode):
            continue
        links += 1
        if inside or links > _LINKS_FOLLOWED:  # a per-process link; past the kernel's limit nothing opens
            return entered
        try:
            target = os.readlink(prefix)
        except OSError:
            return None
        link, prefix = via or prefix, "/" if os.path.isabs(target) else os.path.dirname(prefix)
        pending[:0] = [(p, link) for p in Path(target).parts if p != "/"]
    return entered


def _refuse_a_finished_set(folder: Path, variable: str) -> None:
    """A lock folder inside a finished run set (as named, or through a link): its lock file,
    kept after the command, would fail the set's verification. Refused before anything is made."""
    holder = finished_set_holding(folder)
    if holder is not None:
        raise LockSettingError(f"{variable}={str(folder)!r}: lock folder {folder} is inside {described(holder)}, "
                               "whose evidence is not added to (a lock file there fails its verification); set "
                               f"{variable} to a folder outside it")


def open_private_dir(path: Path, variable: str = LOCK_DIR_VARIABLE) -> int:
    """A descriptor of `path` (created with mode 0700 when missing). Refused unless it is a
    directory, not a link, owned by this user and writable by no one else; the checks are
    made on the opened descriptor, so the folder cannot be swapped between check and use.
    A folder this call made is removed again when refused: a refusal leaves nothing behind."""
    made = _make_private_dir(path, variable)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        raise _setting_or_state(f"lock folder {path}: {unusable(path, exc)}; set {variable} to a folder of "
                                "your own", variable) from None
    st = os.fstat(fd)
    problem = None
    if st.st_uid != os.getuid():
        problem = f"belongs to uid {st.st_uid}, not to this user (uid {os.getuid()})"
    elif st.st_mode & 0o022:
        problem = f"is writable by other users (mode {stat.S_IMODE(st.st_mode):04o})"
    else:
        problem = _unsafe_parent(path)
    if problem:
        os.close(fd)
        if made:  # still empty: ours, just made (rmdir removes nothing else)
            with contextlib.suppress(OSError):
                os.rmdir(path)
        raise _refused(path, problem, variable)
    return fd


def _make_private_dir(path: Path, variable: str) -> bool:
    """Make the lock folder where missing, 0700; whether this call made it. A folder above it
    that lets another user swap it is judged first: refused, nothing is made there."""
    if not os.path.lexists(path):
        problem = _unsafe_parent(path, made=False)
        if problem:
            raise _refused(path, problem, variable)
    try:
        os.mkdir(path, 0o700)  # only the last component: a missing parent is the user's to make
        os.chmod(path, 0o700)  # under umask 0777 mkdir gives 0000, which its owner cannot use
    except FileExistsError:
        return False
    except OSError as exc:
        raise _setting_or_state(f"lock folder {path}: cannot create it ({exc.strerror}); set {variable} to a "
                                "folder of your own", variable) from None
    return True


def _refused(path: Path, problem: str, variable: str) -> LockError:
    return _setting_or_state(f"lock folder {path} {problem}; another user could plant, hold or swap its files: "
                             f"remove it, or set {variable} to a folder of your own (mode 0700)", variable)


def _setting_or_state(message: str, variable: str) -> LockError:
    """A lock folder refused: the user's setting where `variable` names it (bad input:
    LockSettingError), else the default folder, the machine's state (LockError)."""
    return LockSettingError(message) if os.environ.get(variable) else LockError(message)


def _unsafe_parent(path: Path, made: bool = True) -> str | None:
    """Why a folder above the lock folder lets another user swap it: that folder, or any
    above it up to /, is theirs or lets them rename entries (sacscale.atomic.others_can_swap:
    open to other users, or to a group with other members, without the sticky bit). The
    lock folder could then be moved away while in use and one of theirs put at its name,
    which Inductor's cache (a path read again and again) would then follow. The parent is
    reached as the kernel reaches it (`path/..`), links on the way judged where they stand
    and where they lead (another user's is refused: they could re-point it, and the path,
    read again by Inductor and matplotlib, would then lead into their folder); of a folder
    not `made` yet, its parent as named (one missing is no problem here: making the folder names it)."""
    try:
        found = swappable_by_others(os.path.join(path, "..") if made else path.parent, its_name=True)
    except FileNotFoundError:
        return None
    if found is None:
        return None
    where, problem = found
    return placed(where or str(path.parent), problem)


def private_folder(name: str) -> Path:
    """`<lock_dir>/<name>`, a folder of this user's own (made 0700 inside the checked lock
    folder; owner, mode and that it is no link checked on the opened descriptor), for what
    another local user must not plant or swap (a cache of code this process runs)."""
    directory = lock_dir()
    dir_fd = open_private_dir(directory)
    try:
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, 0o700, dir_fd=dir_fd)
        try:
            fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
        except OSError as exc:
            raise LockError(f"folder {directory / name}: {unusable(directory / name, exc)}; remove it") from None
        st = os.fstat(fd)
        os.close(fd)
        if st.st_uid != os.getuid() or st.st_mode & 0o077:
            raise LockError(f"folder {directory / name}: not this user's alone (uid {st.st_uid}, mode "
                            f"{stat.S_IMODE(st.st_mode):04o}); remove it")
    finally:
        os.close(dir_fd)
    return directory / name


def unusable(path: Path, exc: OSError) -> str:
    """Why a lock folder or file cannot be opened: one of ours its mode locks us out of
    (made under umask 0777), or not ours / not a plain entry (a link is refused)."""
    try:
        st = os.lstat(path)
    except OSError:
        st = None
    if exc.errno == errno.EACCES and st is not None and st.st_uid == os.getuid() and not stat.S_ISLNK(st.st_mode):
        return (f"its mode {stat.S_IMODE(st.st_mode):04o} keeps its owner out ({exc.strerror}; made under a umask "
                f"such as 0777?): chmod u+rw{'x' if stat.S_ISDIR(st.st_mode) else ''} it")
    if st is None and exc.errno in (errno.EACCES, errno.EROFS):  # nothing there: its folder refused the new name
        return f"cannot be made: its folder {path.parent} is not writable ({exc.strerror})"
    return f"not a directory of this user's ({exc.strerror}; a symbolic link is refused)" if st is None or \
        stat.S_ISDIR(st.st_mode) or stat.S_ISLNK(st.st_mode) else f"cannot open it ({exc.strerror})"
