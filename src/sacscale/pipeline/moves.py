"""Moving what record-run sets aside (a failed attempt into the attic, a completed run's
learning state into its folder) where the destination may lie on another file system than
the run's folders: a `logs/` linked to a scratch disk is an ordinary layout. A rename cannot
cross file systems (EXDEV): the completed run was marked failed and a failed attempt, its
checkpoint with it, was deleted. Across file systems the entry is copied into a private
folder of this process's making beside the destination (a name no one can guess: a shared
/dev/shm is an ordinary destination), renamed into place once whole, and only then removed
from where it was; a copy that fails is removed and the source is left as it was, and a copy
whose process was killed is removed by the next one that looks (`remove_dead_copies`). A source that cannot
then be removed (an entry the file system refuses to delete) is reported, not called moved,
and marked with where its whole copy went, so that a rerun removes it rather than copying
what is left of it into the attic once more."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import re
import secrets
import shutil
import stat
import sys
from collections.abc import Callable
from pathlib import Path

from sacscale.long_names import error_text, name_that_fits
from sacscale.no_replace import rename_into_place
from sacscale.reading import NotRegularFile, open_regular

# written into a folder copied whole elsewhere but not removed: the copy's path
MOVED_MARKER = ".sacscale-moved-to"
# a partial copy's name: `.<name>.copying-<pid>-<random>`
COPYING = ".copying-"
_COPY_NAME = re.compile(re.escape(COPYING) + r"(?P<pid>[1-9][0-9]*)-(?P<random>[0-9a-f]{16})\Z")
# written first in a partial copy's private folder, by the process that made it: its pid, the
# random part of the folder's name and the copy's target; a folder without it is not one
COPY_MARKER = ".sacscale-copy"
# the most read of a MOVED_MARKER (a path) and of a run.json compared with its copy's
_MARKER_BYTES = 16384
_RUN_JSON_BYTES = 1 << 20


class SourceLeft(OSError):
    """The copy is whole at its destination, but the source could not be removed."""


def move(source: Path, target: Path) -> None:
    """Move `source` (a file or a folder) to `target`, which does not exist yet: one rename
    on one file system, else a copy made whole under a temporary name first. Raises OSError
    with `source` intact where the move cannot be made, and SourceLeft where `target` is
    whole but what is left of `source` could not be removed. Another user's entry at `target`
    (an empty folder she made there meanwhile, in a sticky shared folder) is refused (EPERM),
    never replaced."""
    try:
        rename_into_place(source, target)  # never over another user's entry come at the name meanwhile
        return
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
    _copy_across(source, target)


def _copy_across(source: Path, target: Path) -> None:
    # copied inside a private folder of this process's own making: a crash mid-copy leaves a
    # hidden `.<name>.copying-<pid>-<random>`, never an entry read as whole; an entry another
    # user planted at a name she guessed is never copied into nor removed
    made = _private_folder(target)
    inside = made.path / target.name
    try:
        if source.is_dir() and not source.is_symlink():
            shutil.copytree(source, inside, symlinks=True)
        else:
            shutil.copy2(source, inside, follow_symlinks=False)
        rename_into_place(inside, target)
    except shutil.Error as exc:  # copytree's list of the files it could not copy
        made.remove()
        first = exc.args[0][0][2] if exc.args and exc.args[0] else exc
        raise OSError(errno.EIO, f"cannot copy it to another file system ({first})", str(source), None,
                      str(target)) from exc
    except OSError:
        made.remove()
        raise
    made.remove()
    try:
        remove(source)
    except OSError as exc:
        _mark_copied(source, target)
        raise SourceLeft(exc.errno, exc.strerror or str(exc), exc.filename or str(source)) from exc


class _Partial:
    """The private folder (0700) a copy across file systems is made in, locked while this
    process copies (a leftover whose lock is free and whose pid is gone is a dead copy's), and
    removed only while it is still the folder this process made (its device and inode)."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path, self._fd = path, fd
        self._made = os.fstat(fd)

    def remove(self) -> None:
        try:
            now = os.lstat(self.path)
            if (now.st_dev, now.st_ino) == (self._made.st_dev, self._made.st_ino):
                _remove(self.path)
        except OSError:
            pass  # gone already, or not ours to remove
        finally:
            os.close(self._fd)


def _private_folder(target: Path) -> _Partial:
    """`.<name>.copying-<pid>-<random>` beside `target`, made by this process alone (an
    exclusive mkdir of a name no one can guess; another name where one stands there), with
    COPY_MARKER written in it first."""
    for _ in range(100):
        random = secrets.token_hex(8)
        after = f"{COPYING}{os.getpid()}-{random}"
        path = target.parent / name_that_fits(target.parent, ".", target.name, after)
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            continue
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        with contextlib.suppress(OSError):  # a file system without locks: the pid tells alone
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        made = _Partial(path, fd)
        try:
            _write_marker(fd, random, target)
        except OSError:
            made.remove()
            raise
        return made
    raise FileExistsError(errno.EEXIST, "no free name for a partial copy", str(target.parent))


def _write_marker(folder_fd: int, random: str, target: Path) -> None:
    text = json.dumps({"pid": os.getpid(), "random": random, "target": os.path.abspath(target)})
    fd = os.open(COPY_MARKER, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=folder_fd)
    with os.fdopen(fd, "w") as fh:
        fh.write(text)


def _remove(path: Path) -> None:
    with contextlib.suppress(OSError):  # a partial copy: what cannot be removed is hidden under its name
        remove(path)


def dead_copies(folder: Path, of: str | Callable[[str], bool]) -> list[tuple[Path, int]]:
    """This user's partial copies in `folder` (of the entry named `of`, or of any whose name
    `of` accepts) whose maker is gone: the process its name gives no longer runs and no
    process holds its lock. Each with the pid that made it."""
    try:
        entries = sorted(os.listdir(folder))
    except OSError:
        return []
    found = []
    for entry in entries:
        pid = _copy_of(folder, entry, of)
        if pid is not None and not _runs(pid) and not _locked(folder / entry):
            found.append((folder / entry, pid))
    return found


def _copy_of(folder: Path, entry: str, of: str | Callable[[str], bool]) -> int | None:
    """The pid that made `entry` where it is a partial copy (of `of`): never on its name
    alone, but where it is this user's folder holding the marker its maker wrote first,
    naming that pid, the random part of its name and a target in `folder` whose partial
    name is `entry`."""
    found = _COPY_NAME.search(entry)
    if found is None or not entry.startswith(".") or not _ours(folder / entry):
        return None
    marker = _marker(folder / entry)
    target = marker.get("target")
    if (marker.get("pid") != int(found.group("pid")) or marker.get("random") != found.group("random")
            or not isinstance(target, str)):
        return None
    name = Path(target).name
    if not (name == of if isinstance(of, str) else of(name)):
        return None
    if entry != name_that_fits(folder, ".", name, found.group()) or not _same_folder(Path(target).parent, folder):
        return None
    return int(found.group("pid"))


def _marker(path: Path) -> dict:
    """What COPY_MARKER in the partial copy `path` says: a file of this user's, no link."""
    try:
        said = json.loads(_own_small_file(path / COPY_MARKER, 4096) or b"")
    except ValueError:
        return {}
    return said if isinstance(said, dict) else {}


def _own_small_file(path: Path, limit: int) -> bytes | None:
    """The first `limit` bytes of `path` where it is a plain file of this user's, opened
    without following a link at its name or waiting on a FIFO; else None. A leftover folder
    is anyone's to have filled: what it holds is read only as far as it is provably ours."""
    try:
        with os.fdopen(open_regular(path), "rb") as fh:
            found = os.fstat(fh.fileno())
            return fh.read(limit) if found.st_uid == os.geteuid() and found.st_size <= limit else None
    except (OSError, NotRegularFile):
        return None


def _same_folder(one: Path, other: Path) -> bool:
    try:
        return os.path.samefile(one, other)
    except OSError:
        return False


def _ours(path: Path) -> bool:
    try:
        made = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(made.st_mode) and made.st_uid == os.geteuid()


def _runs(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: it runs
        return True
    return True


def _locked(path: Path) -> bool:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return True  # not to be judged: left alone
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False  # a file system without locks: the pid tells alone
    finally:
        os.close(fd)
    return False


def remove_dead_copies(folder: Path, of: str | Callable[[str], bool], say: Callable[[str], None]) -> None:
    """Remove this user's partial copies in `folder` (of `of`, as dead_copies) left by a move
    whose process died mid-copy (killed: hundreds of megabytes, hidden), each said in one
    line; one that cannot be removed is named."""
    for path, pid in dead_copies(folder, of):
        try:
            remove(path)
        except OSError as exc:
            say(f"cannot remove {path}, the partial copy of a move that process {pid} did not finish (it is gone) "
                f"({error_text(exc)}): remove it yourself")
            continue
        say(f"removed {path}, the partial copy of a move that process {pid} did not finish (it is gone)")


def remove(path: Path) -> None:
    """Remove a file or a folder with all it holds; raises the first OSError met (after
    removing all it can), so a removal that fails is never taken for one done."""
    if path.is_dir() and not path.is_symlink():
        failed: list[OSError] = []
        if sys.version_info >= (3, 12):
            shutil.rmtree(path, onexc=lambda _f, _p, exc: failed.append(exc))
        else:
            shutil.rmtree(path, onerror=lambda _f, _p, info: failed.append(info[1]))
        if failed:
            raise failed[0]
    else:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()


def _mark_copied(source: Path, target: Path) -> None:
    with contextlib.suppress(OSError):
        if source.is_dir() and not source.is_symlink():
            (source / MOVED_MARKER).write_text(f"{target}\n")


def copied_to(folder: Path, into: Path, named: Callable[[str], bool]) -> Path | None:
    """Where a folder not removed after its copy went, if that copy is whole there still: a
    folder (no link) in `into` under a name `named` accepts, holding the same run.json as
    `folder`; else None (a marker naming anything else is no proof the folder is kept). The
    marker and both run.json are read only as plain files of this user's, of bounded size:
    a link, a FIFO or a huge file there is no marker of ours."""
    marker = _own_small_file(folder / MOVED_MARKER, _MARKER_BYTES)
    run_json = _own_small_file(folder / "run.json", _RUN_JSON_BYTES)
    if marker is None or run_json is None:
        return None
    try:
        target = Path(marker.decode().strip())
        whole = (target.is_absolute() and named(target.name) and stat.S_ISDIR(os.lstat(target).st_mode)
                 and os.path.samefile(target.parent, into)
                 and _own_small_file(target / "run.json", _RUN_JSON_BYTES) == run_json)
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return target if whole else None
