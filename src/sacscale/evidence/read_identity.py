"""Which file each of verify's reads saw: the set's files (and its report's) are hashed in
one read and read again by every later check (events, records, the page), so a file renamed
over another, or written in place, between those reads would have the hash vouch for bytes
no check read. Each file's identity is taken before the first read and again after the
last; any that differs, and any file that appeared or went meanwhile, is named, and the
verdict does not stand. stat only: a rename, a write, or a swap back through a hard link
each change the inode or the ctime (Linux), so nothing is hashed twice."""

from __future__ import annotations

import os
import stat
from pathlib import Path

Identity = tuple[int, int, int, int, int]


def _identity(st: os.stat_result) -> Identity:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _files_under(folder: Path, prefix: str, out: dict[str, Identity]) -> None:
    """Every entry under `folder` but its folders, lstat only (nothing followed or opened),
    keyed `prefix + relative path`; one gone while it is walked is left out (as gone)."""
    if folder.is_symlink() or not folder.is_dir():
        return
    stack = [folder]
    while stack:
        here = stack.pop()
        try:
            entries = list(os.scandir(here))
        except OSError:
            continue
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                stack.append(Path(entry.path))
            else:
                out[prefix + Path(entry.path).relative_to(folder).as_posix()] = _identity(st)


def identities(root: Path, reports: Path | None, manifest: Path) -> dict[str, Identity]:
    """The identity of every file of the set, of its report folder (as `reports/S/...`) and
    of a manifest kept elsewhere (by its path)."""
    out: dict[str, Identity] = {}
    _files_under(root, "", out)
    if reports is not None:
        _files_under(reports, f"reports/{root.name}/", out)
    if not manifest.is_relative_to(root):
        try:
            out[str(manifest)] = _identity(os.lstat(manifest))
        except OSError:
            pass
    return out


def changed_between(before: dict[str, Identity], after: dict[str, Identity]) -> list[str]:
    """The files whose identity differs, appeared or went, sorted."""
    return sorted(name for name in before.keys() | after.keys() if before.get(name) != after.get(name))
