"""Child interpreters started without the working folder on their import path.

`python -c CODE` and `python -m MODULE` put the working folder first on sys.path, before the
standard library and site-packages. Run from a folder another user can write (a shared
folder under /tmp, her checkout), her `json.py`, `venv.py` or `multiprocessing.py` there
would run as this user in every such child: reference-env's `-m venv` and `-m pip`, the
reference interpreter's `-c` probes, the reference trainer's `-m`, multiprocessing's spawn
children (collectors, ranks: `python -c 'from multiprocessing.spawn import spawn_main ...'`),
and a `python -m` trainer record-run starts. PYTHONSAFEPATH (honoured by Python 3.11 and
later, which the project requires) leaves that folder off in each child that inherits this
process's environment: set once for the whole command, whatever starts the children. A
child's own sys.path entries (PYTHONPATH, a script's folder) are kept.

`python -m sacscale ...` (and `-m sacscale.cli`, torchrun's form) is such an interpreter
itself: the package takes the working folder off its own path as it is first imported
(`working_folder_off_own_path`), before any other module of ours or of the libraries is
read, so a sourceless `json.pyc` there (ignored by git, so in no record) is not run. What
Python's module runner read before the package (importlib, warnings, functools, ...) is
judged instead: one found in the working folder refuses the command."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.machinery import PathFinder

SAFE_PATH_VARIABLE = "PYTHONSAFEPATH"


@contextmanager
def working_folder_off_child_paths() -> Iterator[None]:
    """Within the block every child Python started inherits PYTHONSAFEPATH=1; the variable
    is as it was afterwards (a command run in-process, by a test, leaves no trace)."""
    before = os.environ.get(SAFE_PATH_VARIABLE)
    os.environ[SAFE_PATH_VARIABLE] = "1"  # any non-empty value; an empty one is Python's "off"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(SAFE_PATH_VARIABLE, None)
        else:
            os.environ[SAFE_PATH_VARIABLE] = before


def module_runner_problem() -> str | None:
    """For `python -m sacscale...`: the working folder off this interpreter's path
    (working_folder_off_own_path); the line that refuses the command where a module was
    already read from it, else None."""
    shadowed = working_folder_off_own_path()
    if not shadowed:
        return None
    return (f"sacscale: error: python -m read {', '.join(shadowed)} from the working folder {os.getcwd()} before "
            "sacscale started, not the standard library's or an installed package's: remove it, or run the "
            "`sacscale` command (or `python -P -m sacscale`), which leaves the working folder off the import path")


def working_folder_off_own_path() -> list[str]:
    """For an interpreter started with `-m`: the working folder Python put first on sys.path
    taken off it (as -P does), unless -P or PYTHONSAFEPATH already kept it off. Where the
    package itself is in that folder (run from src/) the folder goes last instead: the code is
    still found, by spawned children too (they take this path), after the standard library
    and the installed packages. Returns what was read from the folder before this ran, where
    the rest of the path finds another module of that name (or none): `name (file)` each."""
    if sys.flags.safe_path or not sys.path:
        return []
    try:
        here = os.getcwd()
    except OSError:  # a removed working folder: its name is on the path as given, holding nothing
        return []
    if sys.path[0] not in ("", here):
        return []
    del sys.path[0]
    if os.path.dirname(os.path.dirname(os.path.abspath(__file__))) == here:
        sys.path.append(here)
    return _shadowing(here)


def _shadowing(folder: str) -> list[str]:
    """Top-level modules already imported from `folder` that the rest of the path would not
    have given: the working folder's own module stood in for a library's."""
    found = []
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if "." in name or name == "sacscale" or not isinstance(file, str):
            continue
        where = os.path.dirname(os.path.abspath(file))
        if os.path.basename(file).startswith("__init__."):
            where = os.path.dirname(where)
        if where != folder:
            continue
        spec = PathFinder.find_spec(name, sys.path)
        if spec is None or spec.origin is None or os.path.abspath(spec.origin) != os.path.abspath(file):
            found.append(f"{name} ({file})")
    return found
