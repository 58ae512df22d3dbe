"""Whether another user can change a set's files after verify read them: its evidence folder
(results/S) or report folder (reports/S) is theirs, lies in a folder of theirs, or is one they
may write (sacscale.atomic's rule on other users' folders and files), or a file or folder
inside is. The verdict holds for the files as read; such a set is verified, with a note
saying who may change them since (another user's set is one root may well verify)."""

from __future__ import annotations

import os
from pathlib import Path

from sacscale.atomic import others_can_swap, others_can_write_file

_SINCE = "who can change its files after this verification: the verdict holds for them as read now"


def owner_notes(root: Path, reports: Path | None) -> list[str]:
    """One note for each of results/S and reports/S where another user can change what they
    hold: the folder itself, else its first entry they may write."""
    notes = []
    for folder, shown in ((root, f"results/{root.name}"), (reports, f"reports/{root.name}")):
        if folder is None or folder.is_symlink() or not folder.is_dir():
            continue  # a link is refused, a missing report named, by the tree's checks
        found = _changeable(folder)
        if found is not None:
            rel, problem = found
            notes.append(f"{shown}{rel}: {problem}, {_SINCE}")
    return notes


def _changeable(folder: Path) -> tuple[str, str] | None:
    """('' or '/path/inside', why another user can change it) for `folder`, else None."""
    try:
        problem = others_can_swap(folder)
    except OSError:  # gone meanwhile: whatever reads it names that
        return None
    if problem:
        return "", problem
    for top, folders, files in os.walk(folder):
        for name in folders + files:
            path = os.path.join(top, name)
            try:
                problem = others_can_write_file(os.lstat(path), path)
            except OSError:
                continue
            if problem:
                return "/" + os.path.relpath(path, folder), problem
    return None
