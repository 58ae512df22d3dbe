"""The lock of the outputs a command writes together (a record and its figure, a table and
its statistics, a video and the record of its choice).

Each output is written atomically, but two commands given the same outputs at once could
leave one's record beside the other's figure, both exit 0 (`evaluate --output e.json
--figure e.png`, one with 2 envs per command, one with 1). The command holds the lock of
each of its outputs (`sacscale.locks.lock_beside`: `.<name>.lock` beside the file, removed
on release) from before its work until the last one is written. As for a report's folder,
a run set and a recorded run, a second command given any of them is refused at once, naming
the holder, rather than waited for: its work takes seconds to minutes and would then
replace the first one's outputs; the user decides which to run again.

A folder an output goes into, or a folder output itself, may be, or lie inside, another
command's live folder: a run folder a trainer holds (`.<name>.trainer-lock`), a record-run's
run or work folder (`.<name>.lock`), another command's output folder. Written there, the
file became part of that run's evidence (a recorded run carrying another run's evaluation),
or took the name record-run was to give its completed run. Such an output is refused,
naming the holder, before its lock or any folder for it is made
(sacscale.pipeline.held_locks); the command record-run starts may write into the work
folder record-run holds for it.
"""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from pathlib import Path

from sacscale.atomic import refuse_foreign_links
from sacscale.commands import BadInput
from sacscale.lock_names import lock_name_problem
from sacscale.locks import RECORDED_IN_VARIABLE, HeldBeside, LockError, UntrustedLock, lock_beside
from sacscale.output_owner import foreign_entry_problem
from sacscale.pipeline.held_locks import held_at_or_above


Output = tuple[str, str | os.PathLike | None]  # (the option, the path given; None: not given)


def _lock_name(path: str | os.PathLike, folder: bool = False) -> Path:
    """The output as the kernel reaches it: a file's folder resolved (a link or `..` on the
    way, one lock), its own name kept (an output that is a link is replaced, not followed);
    a folder written into resolved whole (a link at its name leads into the same folder)."""
    if folder:
        return Path(os.path.realpath(path))
    return Path(os.path.realpath(Path(path).parent)) / Path(path).name


@contextlib.contextmanager
def holding_outputs(*outputs: Output, folders: tuple[Output, ...] = ()) -> Iterator[None]:
    """Hold the lock of each output, (option, path) each, not given (None) skipped, and of each
    folder the command writes into (`folders`); BadInput, naming the option, the file and the
    holder, where another command holds one, or where it is, or lies inside, another command's
    live folder. Taken in one order (by resolved name, a folder before what goes into it): of
    two commands that share outputs, one always goes on. The folders made for the locks are
    removed again where nothing was written into them."""
    named = [(option, path, is_folder) for listed, is_folder in ((outputs, False), (folders, True))
             for option, path in listed if path]
    for option, path, is_folder in named:  # all judged before any lock or folder is made
        refuse_a_lock_name(option, path)
        if problem := foreign_link_problem(path, is_folder) or link_loop_problem(path, is_folder):
            raise BadInput(f"{option} {path}: {problem}; nothing was written")
    given = sorted([(_lock_name(path, is_folder), option, path, is_folder) for option, path, is_folder in named],
                   key=lambda g: str(g[0]))
    made = {p for name, _, _, _ in given for p in name.parents if not p.exists()}
    try:
        with contextlib.ExitStack() as held:
            for name, option, path, is_folder in given:
                refuse_a_live_folder(option, path, name.parent)  # before its lock's folder is made
                try:
                    held.enter_context(lock_beside(name))
                except HeldBeside as exc:
                    raise BadInput(f"{option} {path}: another sacscale command is writing this output ({exc.holder} "
                                   f"holds {exc.lock}); nothing was written: run this one once it has finished, or "
                                   "write it elsewhere") from None
                except LockError as exc:
                    _refuse_unwritable(name.parent, path, exc.errno)
                    raise BadInput(f"{option} {path}: cannot lock it to write it ({exc}); nothing was "
                                   "written") from None
                if is_folder:  # the folder itself, its own lock (this command's now) aside
                    refuse_a_live_folder(option, path, name)
            yield
    finally:
        for folder in sorted(made, key=lambda p: len(p.parts), reverse=True):
            with contextlib.suppress(OSError):
                folder.rmdir()  # only an empty one: a folder an output was written into stays


def foreign_link_problem(path: str | os.PathLike, folder: bool = False) -> str | None:
    """Why `path`, an output (a `folder` written into: its own name followed too), is reached
    through another user's symbolic link, as `LINK: a symbolic link of ...` (the write's own
    refusal's words), or, a file output, is another user's file or link, which its write would
    replace (`belongs to uid N, another user ...`; a folder of theirs is refused as a folder
    another user can change, sacscale.atomic.others_can_swap); None where neither."""
    try:  # a name inside the folder: the folder's own name is on the way to what goes there
        refuse_foreign_links(Path(path, "entry") if folder else path)
    except OSError as exc:
        return f"{exc.filename}: {exc.strerror}"
    return None if folder else foreign_entry_problem(path)


def link_loop_problem(path: str | os.PathLike, folder: bool = False) -> str | None:
    """Why the folder `path` goes into (a `folder` itself) cannot be reached: a symbolic link on
    the way leads back to itself (mkdir called the lock's folder `File exists`); None if none."""
    holder = Path(path) if folder else Path(path).parent
    looped = None
    for above in (holder, *holder.parents):  # up to the first folder reached: the loop's own name
        try:
            os.stat(above)
        except OSError as exc:
            looped = above if exc.errno == errno.ELOOP else looped
            continue
        break
    if looped is None:
        return None
    return f"{looped}: a loop of symbolic links (a link that leads back to itself, or one of a circle); " \
           "name a folder that exists, or remove the link"


def refuse_a_lock_name(option: str, path: str | os.PathLike) -> None:
    """BadInput where the output (a file or a folder) is named as a lock file of this project's:
    written there, it replaced the lock another command held by that file, whose flock then
    held an unlinked file, and a second train or record-run went on in the live folder."""
    if problem := lock_name_problem(path):
        raise BadInput(f"{option} {path}: {problem}; nothing was written")


def refuse_a_live_folder(option: str, path: str | os.PathLike, folder: Path) -> None:
    """BadInput where `folder` is, or lies inside, a folder whose lock another process holds
    (a live train's run folder, a record-run's run or work folder, another command's output
    folder), naming the holder; the work folder of the record-run that started this command
    aside. Locks this process holds are not another's."""
    try:
        live = held_at_or_above(folder, skip=os.environ.get(RECORDED_IN_VARIABLE))
    except UntrustedLock as exc:
        raise BadInput(f"{option} {path}: {exc}; nothing was written") from None
    if live is not None:
        raise BadInput(f"{option} {path}: is or lies inside {live.beside}, where {live.doing} ({live.said()}), whose "
                       "files an output there would join; nothing was written: write it elsewhere, or once that "
                       "command has ended")


def _refuse_unwritable(folder: Path, path: str | os.PathLike, refused: int | None = None) -> None:
    """A folder no file can be written in (a read-only or full disk, one out of inodes, one not
    ours to write): named as the write itself would name it (`PATH: read-only file system`,
    `PATH: no space left on the device`), not as its lock, whether the disk refused the lock
    file or the folder made for it; so is a plain file where a folder on the way must be. A
    folder not made yet is judged by the nearest one there, where it would be made."""
    if refused in (errno.ENOSPC, errno.EDQUOT, errno.EROFS):
        raise OSError(refused, os.strerror(refused), str(path))
    existing = next((p for p in (folder, *folder.parents) if p.exists()), None)
    if existing is None:
        return
    if not existing.is_dir():
        raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(existing))
    try:
        read_only = os.statvfs(existing).f_flag & os.ST_RDONLY
    except OSError:
        return
    if read_only:
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(path))
    if not os.access(existing, os.W_OK):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
