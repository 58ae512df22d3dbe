"""The folders `sacscale record-run` is given, checked before anything is moved or started:
a failed attempt is moved from the work folder into the attic, a stale run folder too, so an
attic inside either could not take it (the attempt and its log were deleted instead), and a
work or run folder holding the current directory would have that directory moved away. A
work or run folder given as a symbolic link is refused: record-run moves and renames those by
their names, so the link, not its folder, was moved (and one folder had two locks); so is one
with a `..` after a name (`W/lnk/sub/..`), a link by another spelling. The work folder may
lie on another file system, or another mount of one (a bind mount), than the run folder, as
the attic and the learning state's folder may: a rename crosses no mount, so what moves there
is copied across whole under a hidden name and renamed into place (pipeline.moves); a start
that refused by file system let a bind mount through, and its completed run was not recorded.
The learning state's folder is moved into once the run has trained, before the work folder is
renamed: inside the run folder it made that folder and the rename failed (the whole run lost
to a path), and any overlap with the other three mixes a resume's state into the evidence.
Each is judged long enough for what the run makes in it, its names in it (a state folder too
long for the learning state failed only once the run had trained, the run lost to the attic).
The attic and the learning state's folder are made before the run, so that one that cannot
be made (a file in its path, a folder this user may not write) is refused then. None of the
four is taken where another user could swap it (theirs, one open to others, or reached through
a link of theirs): the attempt's files would be made in their folder, or where their link
leads, as the user running record-run (root, often). Nor is the run's log (`--log`), which is
opened as a new file at its name, whatever stood there removed (sacscale.pipeline.run_log): its
folder is judged as those four are, and at its name stands nothing, a plain file or a link of
ours (a link is removed, never followed), never another user's file nor a device (`--log
/dev/null` as root removed the machine's /dev/null), FIFO, socket or folder."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from sacscale.atomic import file_kind, others_can_swap, refuse_foreign_links
from sacscale.long_names import too_long_problem
from sacscale.mount_points import is_mount_point
from sacscale.pipeline.made_room import record_run_paths


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))  # links and `..` resolved: two names of one folder compare equal


def _overlap(one: Path, other: Path) -> bool:
    return _real(one).is_relative_to(_real(other)) or _real(other).is_relative_to(_real(one))


def folders_problem(run_dir: Path, work_dir: Path, attic: Path, state_dir: Path | None = None) -> str | None:
    """What is wrong with the folders, in one line naming the option; None if nothing."""
    here = Path(os.getcwd())
    folders = (("--work-dir", work_dir), ("--run-dir", run_dir))
    problem = _link_problem(folders) or _holds_the_current_directory(folders, here) or _mount_problem(folders)
    if problem := problem or _length_problem(run_dir, work_dir, attic, state_dir):
        return problem
    if _overlap(work_dir, run_dir):
        return (f"--work-dir {work_dir} and --run-dir {run_dir}: one is or holds the other; the work folder is "
                "renamed to the run folder once complete")
    for option, folder in folders:
        if _real(attic).is_relative_to(_real(folder)):
            return (f"--attic {attic}: is or lies inside {option} {folder}, which is itself moved to the attic; "
                    "give a folder outside it")
    given = (*folders, ("--attic", attic))
    problem = None if state_dir is None else _state_dir_problem(state_dir, given)
    for option, folder in given + ((("--state-dir", state_dir),) if state_dir is not None else ()):
        problem = problem or _others_problem(option, folder)
    return problem


def _link_problem(folders: tuple[tuple[str, Path], ...]) -> str | None:
    """A work or run folder given as a link: record-run moves and renames it by its name."""
    for option, folder in folders:
        if folder.is_symlink():
            return (f"{option} {folder}: a symbolic link (not followed); record-run moves and renames this folder by "
                    "its name, never through a link (the link would be moved, not the folder it points to): give "
                    "the folder's own path")
        if _climbs_after_a_name(folder):
            return (f"{option} {folder}: has a .. after a folder's name; record-run moves and renames this folder by "
                    "its name, which a .. does not give (after a link it leads elsewhere than it reads, and a name "
                    "ending in .. cannot be renamed): give the folder's own path")
    return None


def _holds_the_current_directory(folders: tuple[tuple[str, Path], ...], here: Path) -> str | None:
    for option, folder in folders:
        if here.is_relative_to(_real(folder)):  # `/` holds every current directory
            return f"{option} {folder}: is or holds the current directory {here}, which would be moved away"
    return None


def _mount_problem(folders: tuple[tuple[str, Path], ...]) -> str | None:
    """A work or run folder that is a mount point (a bind mount of a folder of the same file
    system too): it can be neither renamed nor set aside."""
    for option, folder in folders:
        if is_mount_point(folder):
            return (f"{option} {folder}: a mount point, which record-run can neither rename nor set aside (a "
                    "completed work folder is renamed to the run folder's name, an earlier attempt's moved to the "
                    "attic); give a folder inside it")
    return None


def _length_problem(run_dir: Path, work_dir: Path, attic: Path, state_dir: Path | None) -> str | None:
    """A folder too long for what the run makes in it, judged with the run's names before it
    trains: its learning state, moved once it had trained, failed there and the completed run
    went to the attic."""
    for option, folder, room, made in record_run_paths(run_dir, work_dir, attic, state_dir):
        if problem := too_long_problem(folder, room, made):
            return f"{option}: {problem}"
    return None


def _climbs_after_a_name(folder: Path) -> bool:
    """Whether a `..` follows a name in `folder` (`a/lnk/sub/..`); leading ones (`../runs/R`)
    climb from the current folder, a real path, and are kept."""
    parts = [part for part in folder.parts if part != "/"]
    named = next((index for index, part in enumerate(parts) if part != ".."), len(parts))
    return ".." in parts[named:]


def _others_problem(option: str, folder: Path) -> str | None:
    """Why another user could swap `folder` or what is made in it: a link of theirs on the way
    to it (its own name too: the folder is written into, not replaced), or it, or the folder
    it would be made in, or one above, is theirs or open to them; None if no one else can."""
    try:
        refuse_foreign_links(folder, reading=True)
    except OSError as exc:
        link = exc.strerror.split(";")[0]  # another user's symbolic link (uid N)
        return (f"{option} {folder}: reached through {link}, {exc.filename}; record-run never writes through "
                "one: give a folder of your own")
    absolute = Path(folder).absolute()
    existing = next(f for f in (absolute, *absolute.parents) if f.exists())
    problem = others_can_swap(existing)
    if problem is None:
        return None
    made = "" if existing == absolute else f" (where {folder} would be made)"
    return f"{option} {existing}{made}: {problem}, who could swap what is written there; give a folder of your own"


def log_problem(log: Path | None) -> str | None:
    """Why the run's log may not be opened at `log` (its old file removed first), in one line
    naming the option; None where it may, or where no log is given."""
    if log is None:
        return None
    if os.path.lexists(log.parent) and not log.parent.is_dir():
        return f"--log {log.parent}: not a folder, where the log's folder stands"
    if problem := _others_problem(f"--log {log}: its folder", log.parent):
        return problem
    try:
        st = os.lstat(log)
    except OSError:  # none there (or its folder is made later): nothing to remove
        return None
    if st.st_uid not in (os.getuid(), 0):
        return (f"--log {log}: belongs to uid {st.st_uid}, another user; the log replaces the file at its name, "
                "never another user's: name a file of your own")
    if stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode):  # a link is removed, never written through
        return None
    return (f"--log {log}: {file_kind(log)}, not a file; the log replaces the file at its name, never a device, "
            "FIFO, socket or folder: name a file")


def _state_dir_problem(state_dir: Path, folders: tuple[tuple[str, Path], ...]) -> str | None:
    for option, folder in folders:
        if _overlap(state_dir, folder):
            return (f"--state-dir {state_dir}: is, holds or lies inside {option} {folder}; the learning state is "
                    "moved there after the run trains, so give a folder apart from the run's folders")
    return None


def make_attic(attic: Path) -> str | None:
    """Make the attic now, so that one that cannot be made (a file in the way, no permission)
    is refused before the run rather than found after it; the problem in one line, else None."""
    return _made(attic, "--attic", "failed attempts are kept there")


def make_state_dir(state_dir: Path) -> str | None:
    """Make the learning state's folder now, as the attic is: it is first written once the
    run has trained, so one that cannot be made lost the whole run. An empty one left by a
    run that fails is harmless: each run's state goes into a folder of its own inside it."""
    return _made(state_dir, "--state-dir", "a completed run's learning state is moved there after it trains")


def _made(folder: Path, option: str, what: str) -> str | None:
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return f"{option} {folder}: cannot be made ({exc.strerror or exc}); {what}"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"{option} {folder}: not writable by this user; {what}"
    return None
