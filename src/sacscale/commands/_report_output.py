"""Where `sacscale report` writes: the whole report, or nothing.

The report (its pages, numbers.json, its figures and, in a folder other than the set's own,
the copy of the best run's video) is written into a private staging folder beside the
report's folder (the same file system) and moved in only once complete: file by file, the
figures first and the pages last, each file it replaces set aside in the staging folder and
put back should a later move fail. A report that fails part way leaves the folder as it was
and removes its own staging folder only.

While it is written, the report's folder is locked (sacscale.locks.lock_beside: a lock file
beside the folder, on its own file system, whoever writes there), and so is the staging
folder, from before it is made: an output of another command there, which the report would
have moved in as its own, is refused as in any live folder (sacscale.pipeline.held_locks).
Only the files the report writes are moved in, and removed; another command's are left. A
second report into the same folder is refused at once, naming the folder, rather than waited
for: a report takes seconds to minutes, and the second one would then silently replace the
first one's report, which is what two reports into one folder at once gets wrong; the user
decides which to run again.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import shutil
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

from sacscale.commands import BadInput
from sacscale.commands._output_lock import refuse_a_live_folder
from sacscale.locks import HeldBeside, LockError, UntrustedLock, lock_beside
from sacscale.mount_points import is_mount_point
from sacscale.no_replace import rename_into_place
from sacscale.output_owner import foreign_entry_problem
from sacscale.pipeline.held_locks import REPORT_STAGING_LETTERS, held_under, report_staging_prefix
from sacscale.reading import open_regular
from sacscale.report.names import TITLE_OPENING
from sacscale.report.text import unmarkdown
from sacscale.usage import say

# what the report replaces in place, set aside inside the staging folder until the end
_SET_ASIDE = ".replaced"
# in every staging folder from its making, holding the writer's pid: the sweep removes only
# folders that hold it (a folder of the user's own of a like name is never taken for one)
STAGING_MARKER = ".sacscale-report-staging"
PAGES = (".md", ".html")
_TITLE_BYTES = 4096  # a title line is a set's name long; a page is not read whole for it


class Refused(Exception):
    """A request this command will not carry out; its message is the one line to print."""


def refuse_folders_in_the_way(folder: Path, files: list[Path]) -> None:
    """Refused, naming it, where a folder stands at the name of a file the report writes in
    `folder` (`files` relative to it), or something other than a folder where a folder of
    the report goes, or another user's file, link or folder there (in a sticky folder such
    as /tmp only root could replace it): found before anything is written, not after the
    other files were."""
    for rel in files:
        path = folder
        for index, part in enumerate(rel.parts):
            path = path / part
            try:
                mode = os.lstat(path).st_mode
            except FileNotFoundError:
                break
            if problem := foreign_entry_problem(path):
                raise Refused(f"{path}: {problem}")
            last = index == len(rel.parts) - 1
            if last and stat.S_ISDIR(mode):
                raise Refused(f"{path}: a folder where the report writes a file; nothing was written (remove the "
                              "folder, or write the report elsewhere)")
            if not last and not stat.S_ISDIR(mode):
                raise Refused(f"{path}: not a folder, where the report writes {rel.name}; nothing was written "
                              "(remove it, or write the report elsewhere)")


def refuse_mount_points(*given: tuple[str, Path]) -> None:
    """Refused where a folder the report's files go into (each with the option that names it)
    is a mount point: the report is made whole beside its folder, on the parent's file
    system, and a rename cannot cross into another one (EXDEV) or out of a bind mount."""
    for option, folder in given:
        if folder.is_dir() and is_mount_point(folder):
            raise Refused(f"{option} {folder}: a mount point, which the report cannot be moved into (it is made whole "
                          "in a staging folder beside the report's folder and renamed in, and a rename does not cross "
                          "into another mount); nothing was written: write the report into a folder inside the mount")


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    with contextlib.ExitStack() as held:
        try:
            held.enter_context(lock_beside(folder))
        except HeldBeside as exc:
            raise Refused(f"{folder}: another report is being written into this folder ({exc.holder} holds "
                          f"{exc.lock}); nothing was written: run this one once it has finished, or write it "
                          "elsewhere") from None
        except LockError as exc:
            raise Refused(f"{folder}: cannot lock the folder to write the report ({exc})") from None
        refuse_live_folders(folder, [Path()])  # a report in a live run or record-run folder would join its files
        yield


def refuse_live_folders(folder: Path, files: list[Path]) -> None:
    """Refused where `folder`, or a folder of it that `files` (relative to it) go into (its
    figures/), is or lies inside a folder whose lock another command holds (another report's
    output folder, a live run): moved there, the report's figures joined that one's files."""
    for sub in sorted({rel.parent for rel in files} | {Path()}):
        named = folder if sub == Path() else f"{folder} (its folder {folder / sub})"
        try:
            refuse_a_live_folder("--output-dir", named, folder / sub)
        except BadInput as exc:
            raise Refused(str(exc)) from None


def set_of_report(folder: Path) -> str | None:
    """The run set whose report `folder` holds, as its report.md's title names it (`# sacscale
    run set NAME`; an older report's NAME in backticks); None where report.md is none of ours."""
    try:
        with os.fdopen(open_regular(folder / "report.md"), "rb") as page:
            first = page.readline(_TITLE_BYTES).decode("utf-8", errors="replace").rstrip("\n")
    except (OSError, ValueError):  # none there, or not a file (NotRegularFile): no report of a set
        return None
    opening = f"# {TITLE_OPENING}"
    return unmarkdown(first[len(opening):]).strip("`") if first.startswith(opening) else None


def refuse_other_sets_reports(folder: Path, run_set: str) -> None:
    """Refused where `folder` holds the report of another run set (it would replace it: a
    report of A into reports/B left B's page titled A, and B failing verification), or the
    report folders of other run sets (`reports/<set>/`, each named after its set: the report
    would lie among them, in the folder of every set's report)."""
    theirs = set_of_report(folder)
    if theirs is not None and theirs != run_set:
        raise Refused(f"{folder}: holds the report of another run set, {theirs[:80]} (its report.md's title), which "
                      f"this report of {run_set[:80]} would replace; nothing was written: write it into a folder of "
                      "its own")
    _refuse_inside_other_sets_report(folder, run_set)
    try:
        with os.scandir(folder) as entries:
            sets = sorted(e.name for e in entries if e.name != run_set and e.is_dir(follow_symlinks=False)
                          and set_of_report(Path(e.path)) == e.name)
    except OSError:  # not made yet, or not to be listed: nothing in it to lie among
        return
    if sets:
        raise Refused(f"{folder}: holds the report folders of other run sets ({', '.join(sets[:3])}"
                      f"{', ...' if len(sets) > 3 else ''}); a report goes into a folder of its own, not among "
                      "them: nothing was written")
    below = _other_sets_report_below(folder, run_set)
    if below is not None:
        raise Refused(f"{folder}: holds the report of another run set below it, {below[1][:80]} in {below[0]}; this "
                      "report's pages and figures would hold that one: nothing was written: write it into a folder "
                      "of its own")


# how far below the report's figures folder another set's report is looked for, and how
# many folders at most: a check, not a walk of the disk
_BELOW_DEPTH, _BELOW_FOLDERS = 2, 2000


def _other_sets_report_below(folder: Path, run_set: str) -> tuple[Path, str] | None:
    """(the folder, its set) of another run set's report in or below the figures folder this
    report writes (written there before it): the report would then hold it. A report kept
    beside, under a name of the user's own (the home folder), is not the report's own."""
    figures = folder / "figures"
    theirs = set_of_report(figures)
    if theirs is not None and theirs != run_set:
        return figures, theirs
    level, seen = [figures], 0
    for _ in range(_BELOW_DEPTH):
        children = []
        for parent in level:
            try:
                with os.scandir(parent) as entries:
                    children += [Path(e.path) for e in entries if e.is_dir(follow_symlinks=False)]
            except OSError:
                continue
        for child in children[:_BELOW_FOLDERS - seen]:
            theirs = set_of_report(child)
            if theirs is not None and theirs != run_set:
                return child, theirs
        seen += len(children)
        if seen >= _BELOW_FOLDERS:
            return None
        level = children
    return None


def _refuse_inside_other_sets_report(folder: Path, run_set: str) -> None:
    """Refused where a folder above `folder` (as the kernel reaches it: links and `..`
    resolved), up to /, holds the report of another run set: the report's pages, figures and
    video would lie inside that set's report folder, counted in its size and named by none
    of its pages."""
    for above in Path(os.path.realpath(folder)).parents:
        theirs = set_of_report(above)
        if theirs is not None and theirs != run_set:
            raise Refused(f"{folder}: lies inside {above}, which holds the report of another run set, {theirs[:80]} "
                          "(its report.md's title); nothing was written: write it into a folder of its own, "
                          "outside that set's report")


def remove_leftover_staging(folder: Path) -> None:
    """Staging folders of `folder` that reports killed before they could remove them (SIGKILL)
    left beside it: under the folder's lock no other report stages for it, so each is a
    leftover. This user's own real folders holding the staging marker, written by a process
    no longer alive, are removed (a link, another user's folder, one without the marker, such
    as a folder of the user's own or a finished report, or one holding another command's live
    lock is left alone), and said in one line."""
    named = re.compile(re.escape(report_staging_prefix(folder)) + f"[{REPORT_STAGING_LETTERS}]{{8}}")
    removed = []
    with os.scandir(folder.parent) as entries:
        for entry in entries:
            if not named.fullmatch(entry.name):
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:  # gone since the listing
                continue
            if stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and _removed_if_abandoned(Path(entry.path)):
                removed.append(entry.name)
    if removed:
        say(f"sacscale report: removed {len(removed)} staging folder(s) left in {folder.parent} by earlier reports "
            f"into {folder.name} that were stopped before they could remove them: {', '.join(sorted(removed))}",
            file=sys.stderr)


def _removed_if_abandoned(staging: Path) -> bool:
    """`staging` removed, under its lock (its own lock file with it), where it is a leftover:
    its report no longer running and no other command's live lock inside."""
    try:
        with lock_beside(staging):  # held by its report while that runs
            if not _abandoned(staging) or _holds_a_live_lock(staging):
                return False
            shutil.rmtree(staging, ignore_errors=True)  # never follows a link inside
    except LockError:
        return False
    return not os.path.lexists(staging)


def _holds_a_live_lock(staging: Path) -> bool:
    """Whether another command holds a lock inside `staging` (an output written there)."""
    try:
        return held_under(staging) is not None
    except UntrustedLock:
        return True


def _abandoned(staging: Path) -> bool:
    """Whether `staging` holds the marker of a report's staging folder, and the report that
    wrote it is no longer running."""
    try:
        with os.fdopen(open_regular(staging / STAGING_MARKER), "rb") as marker:
            pid = int(marker.read(32).decode("ascii", errors="replace").strip() or "0")
    except (OSError, ValueError):  # no marker (or not a plain file): not a staging folder of ours
        return False
    if pid <= 0:  # no process of ours: a marker cut short
        return True
    try:
        os.kill(pid, 0)  # signal 0: only asks whether it runs
    except (ProcessLookupError, OverflowError):
        return True
    except OSError:  # another user's process: alive
        return False
    return False


@contextlib.contextmanager
def staged_report(folder: Path, files: list[Path], run_set: str) -> Iterator[Path]:
    """A private folder to write the report of `run_set` into, as it will lie in `folder`; on
    leaving the block its files replace those of the same names in `folder`. `files`
    (relative to `folder`) are the ones the report is known to write, checked before
    anything is, and the only ones moved in. On an error, `folder` is left as it was (the
    folders made on the way to it removed again)."""
    folder = Path(folder).absolute()
    made = [p for p in folder.parents if not p.exists()]  # for the lock and the staging folder
    try:
        with _locked(folder):
            refuse_folders_in_the_way(folder, files)
            refuse_live_folders(folder, files)
            refuse_other_sets_reports(folder, run_set)
            remove_leftover_staging(folder)
            with _staging_folder(folder, files) as staging:
                (staging / STAGING_MARKER).write_text(f"{os.getpid()}\n", encoding="ascii")
                yield staging
                _move_into_place(staging, folder, files)
    except BaseException:
        for parent in made:  # nearest first; one holding something else now is kept
            try:
                parent.rmdir()
            except OSError:
                break
        raise


# names tried for a staging folder before giving up: each is one of 37**8
_STAGING_TRIES = 100


@contextlib.contextmanager
def _staging_folder(folder: Path, files: list[Path]) -> Iterator[Path]:
    """A new private folder (0700) beside `folder`, its lock held from before it is made until
    the report's own files are gone from it: every look for a live folder (another report's
    or command's output, a record-run's folders) finds it live, and a command that locks it
    (a report or record-run into it) is refused. On leaving, only the report's own files
    (`files`, what it set aside, its marker) are removed: another command's are left."""
    for _ in range(_STAGING_TRIES):
        staging = folder.parent / (report_staging_prefix(folder) + "".join(
            secrets.choice(REPORT_STAGING_LETTERS) for _ in range(8)))
        with contextlib.ExitStack() as held:
            try:
                held.enter_context(lock_beside(staging))
                os.mkdir(staging, 0o700)
            except (HeldBeside, FileExistsError):  # another report's name: try another
                continue
            except LockError as exc:
                raise Refused(f"{staging}: cannot lock the report's staging folder ({exc})") from None
            try:
                yield staging
            finally:
                _remove_own(staging, files)
            return
    raise FileExistsError(errno.EEXIST, f"no free name for the report's staging folder after {_STAGING_TRIES} tries",
                          str(folder.parent))


def _own_paths(staging: Path, files: list[Path]) -> list[Path]:
    """What the report writes in `staging`: its files, those it set aside, its marker."""
    return [staging / STAGING_MARKER, *(staging / rel for rel in files), *(staging / _SET_ASIDE / rel for rel in files)]


def _remove_own(staging: Path, files: list[Path]) -> None:
    """The report's own files and the folders on their way removed from `staging`, and
    `staging` itself once empty; where another command wrote there meanwhile, that is left
    and said in one line."""
    own = _own_paths(staging, files)
    for path in own:
        with contextlib.suppress(OSError):  # gone, or a folder another command put at its name
            path.unlink()
    folders = {p for path in own for p in path.parents if p.is_relative_to(staging)}
    for path in sorted(folders, key=lambda p: len(p.parts), reverse=True):
        with contextlib.suppress(OSError):  # one holding something else is kept
            path.rmdir()
    if os.path.lexists(staging):
        _say_left(staging)


def _say_left(staging: Path) -> None:
    left = _left_by_others(staging)
    held = f"it holds {left[0]}{f' and {len(left) - 1} more' if len(left) > 1 else ''}, which" if left else "what"
    say(f"sacscale report: {staging}: left in place: {held} another command wrote there while the report was made "
        "(the report moved in only its own files); remove the folder once that command has ended", file=sys.stderr)


def _left_by_others(staging: Path) -> list[Path]:
    """The files (and empty folders) in `staging`, sorted: none of them the report's."""
    left = []
    for parent, folders, names in os.walk(staging):
        left += [Path(parent) / name for name in names] + ([] if folders or names else [Path(parent)])
    return sorted(p for p in left if p != staging)


def _staged_files(staging: Path, files: list[Path]) -> list[Path]:
    """The report's own files (`files`) found staged in `staging`, plain files only, the
    figures first and the pages last; anything else there is another command's, not moved."""
    staged = [rel for rel in files if stat.S_ISREG(_mode(staging / rel))]
    return sorted(staged, key=lambda rel: (len(rel.parts) == 1, rel.suffix in PAGES, rel.as_posix()))


def _mode(path: Path) -> int:
    try:
        return os.lstat(path).st_mode
    except OSError:  # not written (a figure with nothing to show)
        return 0


def _move_into_place(staging: Path, folder: Path, own: list[Path]) -> None:
    """Each of the report's staged files renamed over its own in `folder`, what it replaces
    set aside; on a failure every step taken is undone in reverse order and the error raised."""
    files = _staged_files(staging, own)
    refuse_folders_in_the_way(folder, files)
    refuse_live_folders(folder, files)  # every folder a file is moved into, as it stands now
    done: list[tuple[Path, Path | None, bool]] = []  # (target, what it replaced set aside, moved in)
    made: list[Path] = []
    try:
        for rel in files:
            target = folder / rel
            for part in reversed([target.parent, *target.parent.parents]):
                if part.is_relative_to(folder):
                    _make_own_folder(part, made)
            aside = None
            if os.path.lexists(target):
                aside = staging / _SET_ASIDE / rel
                aside.parent.mkdir(parents=True, exist_ok=True)
                os.rename(target, aside)
            done.append((target, aside, False))
            _rename_in(staging / rel, target)
            done[-1] = (target, aside, True)
    except BaseException:
        _undo(done, made)
        raise


def _make_own_folder(folder: Path, made: list[Path]) -> None:
    """`folder` made (added to `made`) where absent, exclusively: one that stands there is
    used only if it is not another user's (in a sticky shared folder she may make it
    meanwhile, and then replace any file the report writes into it)."""
    try:
        folder.mkdir()
    except FileExistsError:
        if problem := foreign_entry_problem(folder):
            raise Refused(f"{folder}: {problem}; nothing was written") from None
        return
    made.append(folder)


def _rename_in(staged: Path, target: Path) -> None:
    """`staged` renamed to `target`, never over another user's entry put there meanwhile."""
    try:
        rename_into_place(staged, target)
    except PermissionError:
        if problem := foreign_entry_problem(target):
            raise Refused(f"{target}: {problem}; nothing was written") from None
        raise


def _undo(done: list[tuple[Path, Path | None, bool]], made: list[Path]) -> None:
    for target, aside, moved in reversed(done):
        with contextlib.suppress(OSError):
            if moved:
                target.unlink()
            if aside is not None:
                os.rename(aside, target)
    for folder in reversed(made):
        with contextlib.suppress(OSError):
            folder.rmdir()
