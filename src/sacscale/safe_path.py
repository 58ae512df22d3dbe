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
child's own sys.path entries (PYTHONPATH, a script's folder) are kept."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

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
