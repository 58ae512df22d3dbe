"""A file or folder name taken as the kernel walks it, for the checks that judge who else may
change what a run or Snakemake reads through it (config_check: config files, profiles and the
recorded matrix; code_folders: the paths a run's environment names).

The kernel enters every component in turn: in `/tmp/eve/../../root/me/x.yaml` it enters
/tmp/eve (following it, if it is a link) before `..` leaves it. os.path.abspath drops `eve/..`
first, so a name judged normalised passed another user's folder unseen, and she could swap a
link of hers in for it while the file was read (or any time before a run's loader walks the
name). These names keep every component, and each folder entered on the way is judged.
"""

from __future__ import annotations

import os

MAX_LINK_HOPS = 40  # the kernel's own limit on links followed in one lookup


def as_walked(path: str | os.PathLike) -> str:
    """`path` made absolute with every component kept (`..` and links included), so that
    what judges it enters each folder the kernel enters."""
    return os.path.join(os.getcwd(), os.fspath(path))


def hop_folders(path: str | os.PathLike) -> list[str]:
    """The folder of `path` as written, of each link it leads through in turn, and of where
    it resolves, each as the kernel walks to it: a link of ours lying in a folder where
    another user may rename entries can be swapped for one of theirs, as the file itself can."""
    current = as_walked(path)
    folders = [os.path.dirname(current)]
    for _ in range(MAX_LINK_HOPS):
        if not os.path.islink(current):
            break
        current = os.path.join(os.path.dirname(current), os.readlink(current))
        folders.append(os.path.dirname(current))
    folders.append(os.path.dirname(os.path.realpath(path)))
    return list(dict.fromkeys(folders))


def lies_inside(path: str | os.PathLike, folder: str | os.PathLike) -> bool:
    """Whether `folder` holds `path` by the names alone, `..` taken as leaving a folder (else
    the walk only passed through `folder` on the way, as in `folder/../x`)."""
    normal, above = os.path.normpath(as_walked(path)), os.path.normpath(as_walked(folder))
    return normal == above or normal.startswith(above.rstrip("/") + "/")
