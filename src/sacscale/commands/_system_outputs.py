"""Outputs named in the kernel's and the devices' file systems: no file is written there.

`verify S --output /dev/stdout`, run as root, replaced the machine's /dev/stdout link with a
plain file (the outputs are written beside their name and renamed onto it). What is refused is
judged by the file system a name really lies on, not by its spelling (/proc/self/cwd/x is an
ordinary folder's name): /proc and /sys are the kernel's whole, but /dev/shm (and any other
file system mounted inside /dev) is an ordinary tmpfs, a scratch folder whose folders and plain
files are outputs like any other.
"""

from __future__ import annotations

import os
from pathlib import Path

_KERNEL_FOLDERS = (Path("/proc"), Path("/sys"))
_DEVICES = Path("/dev")


def reaches_the_system(value: str | os.PathLike) -> bool:
    """Whether the output `value`, or a name its links lead to, hop by hop, lies in /proc or
    /sys, or on the devices' own file system (the one /dev is: a device, /dev/stdout's link).
    A link loop raises OSError or RuntimeError: the command names it."""
    return any(_on_the_system(p) for p in _link_hops(Path(os.path.abspath(value))))


def system_output_refusal(value: str | os.PathLike, run_folder: bool = False) -> str:
    """Why an output that reaches the system is refused; `run_folder`: a trainer's run folder
    (`--log-dir`), a folder where its files would go, reached through a link of one's own too."""
    if run_folder:
        return (f"{value} leads into the kernel's file system (/proc, /sys or the devices'), where no run folder "
                "can be made; name a folder of your own")
    return (f"{value} is a device or a stream of the system, not a file; name a file (the command also prints "
            "what it found)")


def _on_the_system(path: Path) -> bool:
    if any(path.is_relative_to(kernel) for kernel in _KERNEL_FOLDERS):
        return True
    if not path.is_relative_to(_DEVICES):
        return False
    try:
        devices = os.stat(_DEVICES).st_dev
    except OSError:
        return True
    return _device_of(path) == devices


def _device_of(path: Path) -> int | None:
    """The file system `path` is on: its own if there (a link judged where it stands, not where
    it leads), else that of the nearest folder above it, where it would be made."""
    for where in (path, *path.parents):
        try:
            return os.lstat(where).st_dev if where == path else os.stat(where).st_dev
        except OSError:
            continue
    return None


def _link_hops(named: Path) -> list[Path]:
    """Where `named` and each name its links lead to lie, hop by hop, each with its folder
    resolved (a link to /proc/self/fd/1 resolves on to wherever the standard output goes).
    Never a spelling alone: /proc/self/cwd/x is the folder the process works in, as is a
    link of one's own to /proc/self followed by cwd/x."""
    hops = [named.parent.resolve() / named.name]
    while hops[-1].is_symlink() and len(hops) < 21:
        leads_to = Path(os.path.normpath(hops[-1].parent / os.readlink(hops[-1])))
        hops.append(leads_to.parent.resolve() / leads_to.name)
    return hops
