"""Locks other sacscale commands hold under a folder, or beside it and above it.

A folder about to be moved (record-run setting an earlier run or attempt aside) may hold a
live run deeper down (`run/inner`, its trainer's `.inner.trainer-lock` beside it): moving it
pulled that run's folder from under its trainer. A folder about to be written into (a run
folder, an attic) may lie inside another command's live folder, whose lock is beside a folder
above it. Lock files are `.<name>.trainer-lock` (a trainer's) and `.<name>.lock` (record-run's,
or another command's output or set lock: sacscale.locks); a look takes no lock. A report
writes into a staging folder beside its folder (`.<name>.report-XXXXXXXX`) and holds that
folder's lock too, so a look finds it as any live folder."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from sacscale.locks import LOCK, TRAINER_LOCK, holder_beside, holder_of_lock_file, lock_file_beside
from sacscale.long_names import name_that_fits

# entries looked at under a folder before the walk stops: a run folder holds tens of files;
# a tree far larger than any run's is not walked to its end (a run hidden past it is missed)
WALK_LIMIT = 100_000

_DOING = {TRAINER_LOCK: "a sacscale train is training",
          LOCK: "another sacscale command (a record-run perhaps) is at work"}

# a report's staging folder: `.` and the report folder's name, this, and 8 of these letters
# (tempfile's, as earlier reports named them)
REPORT_STAGING = ".report-"
REPORT_STAGING_LETTERS = "abcdefghijklmnopqrstuvwxyz0123456789_"
REPORT_STAGING_RANDOM = 8
# what stands in a staging folder's name for a report folder's name cut to fit (long_names)
REPORT_CUT_MARK = "cut-"
_STAGING_NAME = re.compile(rf"\.(?P<report>.+){re.escape(REPORT_STAGING)}[{REPORT_STAGING_LETTERS}]{{8}}")
_CUT_REPORT = re.compile(rf"(?P<start>.*)\.{REPORT_CUT_MARK}[0-9a-f]{{16}}")


def report_staging_prefix(folder: Path) -> str:
    """The start of the name of each staging folder of the report into `folder`: `.<name>.report-`;
    a folder's name too long for that (a legal name of 238 bytes or more) is cut, a digest of it
    after REPORT_CUT_MARK keeping it apart from others of the same start (long_names), so the
    staging folder's name fits wherever the folder's does. It depends on `folder` alone: every
    report into it finds the same staging folders."""
    room = "x" * REPORT_STAGING_RANDOM
    return name_that_fits(folder.parent, ".", folder.name, REPORT_STAGING + room, REPORT_CUT_MARK)[:-len(room)]


def _doing(parent: Path, name: str, ending: str) -> str:
    """What the holder of the lock (of `ending`) of folder `name` in `parent` is doing."""
    staged = _STAGING_NAME.fullmatch(name) if ending == LOCK else None
    if staged and (cut := _CUT_REPORT.fullmatch(staged["report"])):
        return f"a sacscale report into a folder of {parent} named {cut['start']}... is being written"
    if staged:
        return f"a sacscale report into {parent / staged['report']} is being written"
    return _DOING[ending]


@dataclass(frozen=True)
class HeldLock:
    """A lock another process holds: its file, who (`pid N`), and what that means."""

    lock: Path
    holder: str
    doing: str  # "a sacscale train is training", ...
    beside: Path | None = None  # the folder it is the lock of, where known

    def said(self) -> str:
        return f"{self.holder} holds {self.lock}"


def _ending(name: str) -> str | None:
    if not name.startswith("."):
        return None
    return next((ending for ending in (TRAINER_LOCK, LOCK) if name.endswith(ending)), None)


def held_under(folder: Path) -> HeldLock | None:
    """The first held lock file found anywhere under `folder` (links not followed, at most
    WALK_LIMIT entries); None if none. UntrustedLock where a held one is another user's."""
    pending, seen = [folder], 0
    while pending and seen < WALK_LIMIT:
        try:
            with os.scandir(pending.pop()) as entries:
                listed = list(entries)
        except OSError:
            continue  # gone or unreadable: nothing we could move from under a run there either
        for entry in listed:
            seen += 1
            if entry.is_dir(follow_symlinks=False):
                pending.append(Path(entry.path))
            elif (ending := _ending(entry.name)) and entry.is_file(follow_symlinks=False):
                holder = holder_of_lock_file(Path(entry.path), entry.name, others_only=True)
                if holder is not None:
                    doing = _doing(Path(entry.path).parent, entry.name[1:-len(ending)], ending)
                    return HeldLock(Path(entry.path), holder, doing)
    return None


def held_at_or_above(folder: Path, endings: tuple[str, ...] = (LOCK, TRAINER_LOCK),
                     skip: str | None = None) -> HeldLock | None:
    """The first held lock (of `endings`) beside `folder` (its real path) or beside a folder
    above it, the file system's root aside; `skip` is a real path whose locks are not looked
    at (a record-run's own work folder, to the trainer it starts). None if none."""
    real = Path(os.path.realpath(folder))
    for each in (real, *real.parents):
        if each.parent == each or str(each) == skip:
            continue
        for ending in endings:
            holder = holder_beside(each, ending, others_only=True)
            if holder is not None:
                return HeldLock(lock_file_beside(each, ending), holder, _doing(each.parent, each.name, ending), each)
    return None
