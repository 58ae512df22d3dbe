"""A run configuration's environment variables whose values are paths the run's processes
take code from: modules, shared libraries, and the caches of compiled kernels and bytecode
they load again. A path in a folder another user owns or may write lets that user put
their code into the run, as LD_PRELOAD would (refused outright by interpreter_env; a
temporary folder is judged by temporary_env). Each is judged at planning time, before an
interpreter is started with them (a `sitecustomize.py` on PYTHONPATH runs at every start),
as sacscale.atomic judges a folder that others could swap entries in: the path and every
folder above it. One not made yet is judged by the folder it would be made in, where any
user who may make entries there could make it first."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from sacscale.atomic import refuse_foreign_links, swappable_by_others
from sacscale.pipeline.plan_values import PlanError, shown

# variable -> what the run's processes take from the path it names. Not PYTHONSTARTUP: a
# trainer's interpreter is never interactive (PYTHONINSPECT is refused), so never runs it.
CODE_PATH_ENV = {
    "PATH": "the trainer's command and the tools it starts are looked up in it",
    "LD_LIBRARY_PATH": "the dynamic loader loads shared libraries from it",
    "PYTHONPATH": "Python imports modules from it",
    "PYTHONUSERBASE": "Python imports the user's site-packages from it",
    "PYTHONPYCACHEPREFIX": "Python loads compiled bytecode from it",
    "TORCHINDUCTOR_CACHE_DIR": "torch.compile loads compiled kernels from it",
    "TRITON_CACHE_DIR": "Triton loads compiled GPU kernels from it",
    "CUDA_CACHE_PATH": "CUDA loads compiled GPU code from it",
    "XDG_CACHE_HOME": "libraries keep their caches there, compiled kernels among them",
}
# those that hold several paths, separated by ':'
PATH_LIST_ENV = frozenset({"PATH", "LD_LIBRARY_PATH", "PYTHONPATH"})


def code_path_problem(path: str) -> str | None:
    """Why another user could put what the run loads from `path` there, as a phrase after
    the path; None when no one else can."""
    absolute = Path(os.path.abspath(path))
    try:
        refuse_foreign_links(absolute, reading=True)
    except OSError as exc:
        return f"is reached through {exc.filename}, {exc.strerror.split(';')[0]}"
    try:
        there = next(f for f in (absolute, *absolute.parents) if os.path.exists(f))  # "/" is there
        found = swappable_by_others(there)
        st = os.stat(there)
    except OSError as exc:
        return f"cannot be looked at ({exc.strerror})"
    if found:
        folder, why = found
        return why if folder is None and there == absolute else f"is inside {folder or there}, which {why}"
    if there != absolute and stat.S_IMODE(st.st_mode) & 0o002:
        return (f"is not there yet, and {there} lets every user make entries in it "
                f"(mode {stat.S_IMODE(st.st_mode):04o}): another could make it first")
    if not stat.S_ISDIR(st.st_mode) and st.st_uid not in (os.getuid(), 0):
        return f"belongs to uid {st.st_uid}, another user"
    return None


def check_code_paths(env: dict, where: str) -> None:
    """PlanError naming the first variable of CODE_PATH_ENV in a run's `env` whose path
    another user could put code at."""
    for name, what in CODE_PATH_ENV.items():
        value = str(env.get(name) or "")
        paths = value.split(":") if name in PATH_LIST_ENV else [value]
        for path in filter(None, paths):  # empty: the variable or entry is passed over
            problem = code_path_problem(path)
            if problem:
                raise PlanError(f"{where}: {name}: {shown(path)} {problem}; {what}, so that user's code would run "
                                "in the run: name a folder of your own")
