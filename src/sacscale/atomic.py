"""Atomic file writes: a reader sees the old file or the whole new one, never a part."""

from __future__ import annotations

import errno
import grp
import json
import math
import os
import pwd
import re
import stat
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sacscale import lock_names, posix_acl
from sacscale.group_members import others_in_group as _others_in_group
from sacscale.long_names import cut_with_digest, name_max as _name_max, size as _size
from sacscale.no_replace import rename_into_place
from sacscale.output_owner import refuse_foreign_output


def temporary_path(path: str | Path) -> Path:
    """Where to write `path` before renaming it into place: beside it (the same file system,
    so the rename is atomic), hidden, unique per process and thread, and ending in path's
    suffix (a writer that picks its format by the suffix sees the right one). What a writer
    of the same output killed by SIGKILL left there is removed first (another user's entry at
    `path`, or its folder, is refused: the rename would replace it, or it is theirs). The file is made
    here, new and empty, so that the writer writes into a file of ours; `open_temporary`
    opens it again without following a link and `move_into_place` moves only that file."""
    path = Path(path)
    refuse_foreign_links(path)
    refuse_foreign_output(path)  # nor written into another user's folder
    remove_stale_temporaries(path)
    prefix, suffix = _temporary_parts(path)
    tmp = path.with_name(f"{prefix}{os.getpid()}.{threading.get_ident()}{suffix}")
    if prefix != f".{path.stem}.tmp":
        _OUTPUT_OF[str(tmp)] = str(path)
    try:
        os.close(_claim(tmp))
    except BaseException:  # a stop signal raised here, after the file was made: the caller never gets its name
        _CLAIMED.pop(str(tmp), None)
        tmp.unlink(missing_ok=True)
        raise
    return tmp


# the longest `<pid>.<thread id>` (pid_max is at most 2^22; a thread id is 64 bits)
_LONGEST_IDS = len(f"{2 ** 22}.{2 ** 64}")
# a longer suffix names no format a writer picks by it: a long name's temporary drops it
_LONGEST_KEPT_SUFFIX = 16
# each shortened temporary path made here, to the output it is for: a failed write's message names the output
_OUTPUT_OF: dict[str, str] = {}


def _temporary_parts(path: Path) -> tuple[str, str]:
    """(what precedes the `<pid>.<thread id>`, what follows it) in the temporary names of
    `path`: `.<stem>.tmp` and path's suffix, which depend on path alone (a later writer
    finds a dead one's). Where that would make a name longer than the folder allows (a
    legal output name near the limit), the stem is cut to fit and a digest of the whole
    name keeps it apart from other long names: `.<stem cut>.<digest>.tmp`."""
    prefix, suffix = f".{path.stem}.tmp", path.suffix
    room = _name_max(path.parent) - _LONGEST_IDS
    if _size(prefix + suffix) <= room:
        return prefix, suffix
    suffix = suffix if _size(suffix) <= _LONGEST_KEPT_SUFFIX else ""
    return f".{cut_with_digest(path.stem, path.name, room - _size(suffix) - len('..tmp'))}.tmp", suffix


# a temporary name of a write by another process: .<stem>.tmp<pid>.<thread><suffix>
_TEMPORARY = re.compile(r"\.(?P<stem>.+)\.tmp\d+\.\d+(?P<suffix>(\.[^./]*)?)")


def output_name(path: str) -> str:
    """The output a temporary file was written for (the name the user gave), else the path."""
    if path in _OUTPUT_OF:
        return _OUTPUT_OF[path]
    head, sep, name = path.rpartition("/")
    match = _TEMPORARY.fullmatch(name)
    return f"{head}{sep}{match['stem']}{match['suffix']}" if match else path


_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
# (device, inode) of each temporary file this process made, by its path: in a folder another user can
# rename in, the name may be given to a link or another file between our making it and our writing or moving it
_CLAIMED: dict[str, tuple[int, int]] = {}


def _claim(tmp: Path) -> int:
    """Create `tmp` as a new file; its descriptor. Whatever stands at that name (a leftover
    of ours, or a link someone planted to make the write go into a file of theirs choosing)
    is removed, never followed; one that cannot be removed fails the write, naming it."""
    try:
        fd = os.open(tmp, _NEW_FILE, 0o666)
    except FileExistsError:
        os.unlink(tmp)
        fd = os.open(tmp, _NEW_FILE, 0o666)
    st = os.fstat(fd)
    _CLAIMED[str(tmp)] = (st.st_dev, st.st_ino)
    return fd


def _replaced(tmp: Path) -> OSError:
    return OSError(errno.EEXIST, "the temporary file was replaced by another process while being written (a "
                                 "folder others can write in?); nothing was written", str(tmp))


def _check_claimed(tmp: Path, st: os.stat_result) -> None:
    if _CLAIMED.get(str(tmp)) != (st.st_dev, st.st_ino) or not stat.S_ISREG(st.st_mode):
        raise _replaced(tmp)


def open_temporary(tmp: Path, mode: str = "wb"):
    """`tmp`, which temporary_path made, opened for writing: never through a link, and only
    while it is still the file made there (otherwise an OSError naming it)."""
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _replaced(tmp) from None
        raise
    try:
        _check_claimed(tmp, os.fstat(fd))
        os.ftruncate(fd, 0)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, mode, **({} if "b" in mode else {"encoding": "utf-8"}))


def move_into_place(tmp: Path, path: Path) -> None:
    """Rename `tmp` over `path`, if `tmp` is still the file temporary_path made (a link or
    another file put at its name is not moved) and no other user's entry came to `path`."""
    _check_claimed(tmp, os.lstat(tmp))
    rename_into_place(tmp, path)  # never over another user's entry, also one come since it was judged
    _CLAIMED.pop(str(tmp), None)


@contextmanager
def staged_path(path: str | Path) -> Iterator[Path]:
    """A temporary path for `path`, of outputs that appear together: the caller moves each into
    place (move_into_place) once all are written; one not moved is removed on leaving."""
    path = Path(path)
    refuse_special(path)
    refuse_foreign_links(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temporary_path(path)
    try:
        yield tmp
    finally:
        _CLAIMED.pop(str(tmp), None)
        tmp.unlink(missing_ok=True)  # a link put there is removed, not followed


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """A temporary path to write; on leaving the block it replaces `path`, or on an error it
    is removed and `path` is left as it was."""
    with staged_path(path) as tmp:
        try:
            yield tmp
            move_into_place(tmp, path)
        except OSError as exc:
            if exc.filename:
                raise
            raise OSError(exc.errno, exc.strerror, str(path)) from None  # a write's error names no file


def remove_stale_temporaries(path: Path) -> None:
    """The temporary files of `path` that a writer killed by SIGKILL left (no cleanup could
    run): this user's, of a process that no longer exists; another user's or a live one's stay."""
    prefix, suffix = _temporary_parts(path)
    try:
        entries = [e for e in os.scandir(path.parent) if e.name.startswith(prefix) and e.name.endswith(suffix)]
    except OSError:
        return
    for entry in entries:
        pid = entry.name[len(prefix):].split(".", 1)[0]
        try:
            if not pid.isdigit() or entry.stat(follow_symlinks=False).st_uid != os.getuid() or _alive(int(pid)):
                continue
            os.unlink(entry.path)
        except OSError:
            continue


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def refuse_foreign_links(path: str | Path, reading: bool = False) -> None:
    """No folder on the way to an output is reached through another user's symbolic link
    (one neither ours nor root's): in a shared folder such as /tmp, a link planted where the
    user's output folder will be would have the output written, and a file of that name
    replaced, wherever its owner chose. Linux refuses to follow such links only where
    fs.protected_symlinks is on; this does not depend on it. Our or root's link at the output's
    own name is replaced, never followed (another user's: sacscale.output_owner). With `reading`,
    `path` is an input and its own name is checked too: root reading through such a link would show
    a file only root may read. Our own and root's links are followed, and where they lead is too."""
    path = Path(path)
    found = _foreign_link(str(path if path.is_absolute() else Path(os.getcwd(), path)), reading, [_LINKS_FOLLOWED])
    if found is None:
        return
    link, uid = found
    if reading:
        raise OSError(errno.EPERM, f"another user's symbolic link (uid {uid}); an input is never read through one "
                                   "(it may lead to a file only root can read)", link)
    raise OSError(errno.EPERM, f"a symbolic link of another user's (uid {uid}) on the way to the "
                               "output; an output is never written through one", link)


_LINKS_FOLLOWED = 40  # the kernel's own limit: a path through more links fails to open anyway


def _foreign_link(path: str, final: bool, budget: list[int]) -> tuple[str, int] | None:
    """(link, its uid) of the first symbolic link of another user's that the kernel would
    follow on the way to the absolute `path` (to its last name too if `final`), else None."""
    for name, st in _walked(path, final, budget):
        if stat.S_ISLNK(st.st_mode) and st.st_uid not in (os.getuid(), 0):
            return name, st.st_uid
    return None


def _walked(path: str, final: bool, budget: list[int]) -> Iterator[tuple[str, os.stat_result]]:
    """(name, lstat) of each entry the kernel passes on its way to the absolute `path` (its
    last name too if `final`), in order, the entries on the way to where a link leads
    following the link; ends at a missing entry, a link of another user's (not followed)
    or past the kernel's limit on links."""
    parts = Path(path).parts
    prefix = parts[0]
    for part in parts[1:] if final else parts[1:-1]:
        prefix = os.path.join(prefix, part)  # as the kernel walks it: earlier links followed, `..` not collapsed
        try:
            st = os.lstat(prefix)
        except OSError:
            return  # missing from here on: nothing further down can be a link yet
        yield prefix, st
        if not stat.S_ISLNK(st.st_mode):
            continue
        budget[0] -= 1
        if budget[0] < 0 or st.st_uid not in (os.getuid(), 0):
            return
        try:  # one of ours may lead through another user's
            target = os.path.join(os.path.dirname(prefix), os.readlink(prefix))
        except OSError:
            return
        yield from _walked(target, True, budget)


def others_can_swap(folder: str | Path) -> str | None:
    """Why another user could swap what is written in `folder` (see `swappable_by_others`),
    as a phrase after the folder's name; None if no one else can."""
    found = swappable_by_others(folder)
    return None if found is None else placed(*found)


def placed(where: str | None, problem: str) -> str:
    """A `swappable_by_others` finding as a phrase after the folder's name."""
    if where is None:
        return problem
    if problem.startswith(_RE_POINTABLE):
        return f"is reached through {where}, {problem.removeprefix('is ')}"
    return f"is inside {where}, which {problem}"


_RE_POINTABLE = "is a symbolic link its owner can re-point at any time: uid "


def swappable_by_others(folder: str | Path, every_default: bool = False,
                        its_name: bool = False) -> tuple[str | None, str] | None:
    """(None, why) when another user can rename entries in `folder`, (an ancestor, why)
    when they can in a folder the kernel passes on the way to it (they could move `folder`
    away and put one of theirs at its name), (the link, why) when the kernel follows a link
    of another user's on the way (they can re-point it at any time), at `folder`'s own name
    too with `its_name` (then None, why; without, the caller judges that name, as callers
    that refuse every link there do). Each folder is judged by `_others_can_rename`; the folders
    where our own or root's links lead are judged too.
    A default access control list shapes only the entries made directly in its folder, so
    it is judged on `folder` alone, where the caller makes its entries (the output's folder,
    or the nearest existing one, whose list the folders made under it inherit); a folder
    above gives nothing through it. With `every_default`, every folder's is judged."""
    absolute = os.path.join(os.getcwd(), folder)
    own = os.stat(absolute)
    anchor = Path(absolute).anchor
    walked = [(anchor, os.lstat(anchor)), *_walked(absolute, True, [_LINKS_FOLLOWED])]
    last = os.path.join(*Path(absolute).parts)  # the name _walked gives `folder` itself
    for name, st in walked:
        if stat.S_ISLNK(st.st_mode) and st.st_uid not in (os.getuid(), 0) and (its_name or name != last):
            return (None if name == last else name), f"{_RE_POINTABLE}{st.st_uid}, another user"
        if not stat.S_ISDIR(st.st_mode):
            continue
        here = os.stat(name)
        is_own = (here.st_dev, here.st_ino) == (own.st_dev, own.st_ino)
        problem = _others_can_rename(here, name, made_in=is_own or every_default)
        if problem:
            return (None if is_own else name), problem
    return None


def _others_can_rename(st: os.stat_result, name: str, made_in: bool = True) -> str | None:
    """Why another user can rename entries in the folder of stat `st` (so put their own
    file, folder or link at the name of ours), or None. The rule:
    - the folder is theirs: its owner is neither this user nor root (an owner can chmod it);
    - without the sticky bit, it is writable by others (o+w), or by its group (g+w) where
      that group holds any user but this one: a member, or a user whose primary group it
      is; a group the system cannot look up counts as holding others. So a user-private
      group (umask 002 setups: group alice, alice alone) shares nothing, a lab's does;
    - without the sticky bit, its access control list lets another user, or a group
      holding one, write in it (`_shared_by_group_or_acl`);
    - where entries are `made_in` it, sticky bit or not, its default access control list
      gives such a user or group write on every entry made in it (`default_list_problem`):
      what we write there is theirs.
    With the sticky bit (as /tmp) only an entry's owner, the folder's owner (then we or
    root) and root may rename an entry: what we make there stays ours. Root is trusted."""
    mode = stat.S_IMODE(st.st_mode)
    if st.st_uid not in (os.getuid(), 0):
        return f"belongs to uid {st.st_uid}, another user"
    if mode & 0o002 and not mode & stat.S_ISVTX:
        return f"is writable by other users without the sticky bit (mode {mode:04o})"
    inherited = default_list_problem(st, name) if made_in else None
    if inherited or mode & stat.S_ISVTX:
        return inherited
    return _shared_by_group_or_acl(st, name, " without the sticky bit", "write in it")


def others_can_write_file(st: os.stat_result, name: str) -> str | None:
    """Why another user can change the file of stat `st` at `name` (one that a command reads
    and trusts, such as a learning state), as a phrase after its name; None if no one else
    can. The rule of `_others_can_rename` for a file's own bits: its owner is neither this
    user nor root, it is writable by others (o+w), or by a group holding any user but this
    one (or one the system does not know), or its access control list lets such a user or
    group write it."""
    mode = stat.S_IMODE(st.st_mode)
    if st.st_uid not in (os.getuid(), 0):
        return f"belongs to uid {st.st_uid}, another user"
    if mode & 0o002:
        return f"is writable by other users (mode {mode:04o})"
    return _shared_by_group_or_acl(st, name, "", "write it")


def _shared_by_group_or_acl(st: os.stat_result, name: str, unless: str, what: str) -> str | None:
    """Why a user other than this one may write `name` (of stat `st`) through its group or
    its access control list. Without a list, the group bits (g+w) are the owning group's,
    judged by who is in it. With one, whatever the mode shows, the list decides: the group
    bits are then its mask, and the owning group's own line and each named user's and
    group's, capped by the mask, say who may write."""
    mode = stat.S_IMODE(st.st_mode)
    try:
        entries = posix_acl.read(name, posix_acl.ACCESS)
    except posix_acl.UnreadableList as exc:
        return f"has an access control list this program cannot read ({exc}; getfacl shows it)"
    if entries is None:
        return _group_problem(st.st_gid, unless, mode) if mode & 0o020 else None
    writers = posix_acl.writers(entries)
    if any(e.tag == posix_acl.GROUP_OBJ for e in writers):
        problem = _group_problem(st.st_gid, unless, mode)
        if problem:
            return problem
    named = _grantees([e for e in writers if e.tag in (posix_acl.USER, posix_acl.GROUP)], st.st_gid)
    if named:
        return f"has an access control list (getfacl shows it, setfacl -b removes it) that lets {named} {what}"
    return None


def default_list_problem(st: os.stat_result, name: str) -> str | None:
    """Why the default access control list of the folder `name` (of stat `st`) hands another
    user every entry made in it, or None. Entries made in such a folder inherit the list as
    their access list (and a folder as its default too), with the creating call's mode in
    place of the umask: a file made 0666 there keeps every write the list gives, while the
    folder's own mode shows none of it. The owning group's line goes to the group new entries
    get: the folder's with the set-group-ID bit, else this process's."""
    if not stat.S_ISDIR(st.st_mode):
        return None
    try:
        entries = posix_acl.read(name, posix_acl.DEFAULT)
    except posix_acl.UnreadableList as exc:
        return (f"has a default access control list this program cannot read ({exc}; getfacl shows it, "
                "setfacl -k removes it)")
    if entries is None:
        return None
    new_group = st.st_gid if st.st_mode & stat.S_ISGID else os.getegid()
    named = _grantees(posix_acl.writers(entries), new_group)
    if named:
        return (f"has a default access control list (getfacl shows it, setfacl -k removes it) that lets {named} "
                "write every entry made in it")
    return None


def _grantees(writers: list[posix_acl.Entry], owning_group: int) -> str:
    """The users and groups of the lines `writers` other than this user, root and a group
    holding this user alone, named for a message ("" when none)."""
    named = (_grantee(entry, owning_group) for entry in writers)
    return " and ".join(dict.fromkeys(n for n in named if n))


def _grantee(entry: posix_acl.Entry, owning_group: int) -> str | None:
    if entry.tag == posix_acl.OTHER:
        return "every other user"
    if entry.tag == posix_acl.USER:
        if entry.id in (os.getuid(), 0):
            return None
        try:
            return f"user {pwd.getpwuid(entry.id).pw_name} (uid {entry.id})"
        except KeyError:
            return f"uid {entry.id} (not known here)"
    gid = owning_group if entry.tag == posix_acl.GROUP_OBJ else entry.id
    others = _others_in_group(gid)
    if others is None:
        return f"group gid {gid} (not known here)"
    return f"group {grp.getgrgid(gid).gr_name} (gid {gid}; other users in it: {_shown(others)})" if others else None


def _group_problem(gid: int, unless: str, mode: int) -> str | None:
    """Why the owning group `gid`, given write, lets a user other than this one write:
    it holds one, or the system does not know it; None for a group of this user alone."""
    others = _others_in_group(gid)
    if others is None:
        return f"is writable by its group (gid {gid}, not known here){unless} (mode {mode:04o})"
    if others:
        return (f"is writable by its group {grp.getgrgid(gid).gr_name} (gid {gid}; other users in "
                f"it: {_shown(others)}){unless} (mode {mode:04o})")
    return None


def _shown(names: list[str]) -> str:
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


_KINDS = ((stat.S_ISREG, "a plain file"), (stat.S_ISDIR, "a folder"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"))


def file_kind(path: str | Path) -> str | None:
    """What stands at `path`, links followed ("a folder", "a character device", ...), for a
    message that says what a name is instead of calling it missing; None where nothing is."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    return next((name for test, name in _KINDS if test(mode)), "no plain file")


def refuse_special(path: Path) -> None:
    """An output that is a device, FIFO or socket (the rename would put a plain file where
    /dev/null was, which breaks the machine when run as root), or a lock file, is not replaced."""
    lock_names.refuse_lock_name(path)
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return  # none there, or the write itself says what is wrong
    for test, name in _KINDS[2:]:  # the devices, FIFOs and sockets
        if test(mode):
            raise OSError(errno.EINVAL, f"not a plain file ({name}): an output replaces a file, never a device, "
                                        "FIFO or socket", str(path))


def write_temporary(tmp: Path, data: bytes) -> None:  # a temporary_path's file
    with open_temporary(tmp) as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    with atomic_path(path) as tmp:
        write_temporary(tmp, data)


def atomic_write_text(path: str | Path, text: str) -> None:
    atomic_write_bytes(path, text.encode())


def _clean(obj):
    """JSON has no NaN/inf: write them as null."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    return obj


def json_text(data) -> str:
    return json.dumps(_clean(data), indent=2, allow_nan=False) + "\n"


def write_json(path: str | Path, data) -> None:
    atomic_write_text(path, json_text(data))
