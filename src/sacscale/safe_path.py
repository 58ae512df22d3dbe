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
read from it. Python's module runner has read a few standard modules before that (importlib,
warnings, functools, ...) with the folder first on the path: one planted there has already run
as this user, and can have put the real module back in sys.modules since. So the folder's
files are judged, not the modules sys.modules holds: a module there named as a standard
library module imported by then refuses the command (one not imported yet is never read).
That is evidence, not protection: the planted code ran first and could have removed itself,
and a planted `sacscale/` package runs in place of ours, which then never runs.
Only the `sacscale` command and `python -P -m sacscale` never read the working folder."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from importlib.machinery import (
    BYTECODE_SUFFIXES,
    EXTENSION_SUFFIXES,
    SOURCE_SUFFIXES,
    ExtensionFileLoader,
    FileFinder,
    FrozenImporter,
    SourceFileLoader,
    SourcelessFileLoader,
)

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
    (working_folder_off_own_path); the line that refuses the command where the folder holds a
    module Python's module runner could have read from it before the package, else None."""
    planted = working_folder_off_own_path()
    if not planted:
        return None
    proven = all(getattr(sys.modules.get(name), "__file__", None) == file for name, file in planted)
    return (f"sacscale: error: python -m {'has already run' if proven else 'may already have run'} "
            f"{', '.join(f'{name} ({file})' for name, file in planted)} from the working folder {os.getcwd()} "
            f"as this user (uid {os.getuid()}), before sacscale started, in place of the library module of that "
            "name: check what it did and remove it, then run the `sacscale` command (or `python -P -m sacscale`), "
            "which never reads the working folder")


def working_folder_off_own_path() -> list[tuple[str, str]]:
    """For an interpreter started with `-m`: the working folder Python put first on sys.path
    taken off it (as -P does), unless -P or PYTHONSAFEPATH already kept it off. Where the
    package itself is in that folder (run from src/) the folder goes last instead: the code is
    still found, by spawned children too (they take this path), after the standard library
    and the installed packages. Returns the modules in the folder that Python's start-up could
    have imported from it before this ran (planted_modules)."""
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
    return planted_modules(here)


def planted_modules(folder: str) -> list[tuple[str, str]]:
    """`(name, file)` for each module `folder` holds, found there as the import system would
    (`name.py`, a sourceless `name.pyc`, an extension `name.*.so`, a package `name/__init__.*`),
    whose name is a standard library module's. Judged by the files, not by sys.modules: a
    planted module that ran can have put the real one back there."""
    finder = FileFinder(folder, (ExtensionFileLoader, EXTENSION_SUFFIXES), (SourceFileLoader, SOURCE_SUFFIXES),
                        (SourcelessFileLoader, BYTECODE_SUFFIXES))
    found = []
    for name in sorted(_names_found_on_the_path()):
        spec = finder.find_spec(name)
        if spec is not None and spec.loader is not None and spec.origin:  # a bare folder only adds a portion
            found.append((name, spec.origin))
    return found


def _names_found_on_the_path() -> set[str]:
    """The standard library's top-level modules imported before our package (sys.modules holds
    their names, whatever module a planted one put back under them), less the ones built in or
    frozen (the interpreter finds those before it looks at the path). Python's start-up reads
    nothing else by name before our package once the folder is on the path (site and .pth files
    ran before it was put there); a module of another name read from it was imported by one of
    these. A module not imported yet is never read from the folder, which is off the path now."""
    return {name for name in sys.stdlib_module_names
            if name in sys.modules and name not in sys.builtin_module_names
            and FrozenImporter.find_spec(name) is None}
