"""A run configuration's environment variables that decide whether its trainer starts at
all: PATH, where the run wrapper looks the trainer's command up, and those Python itself
reads as it starts (PYTHONHASHSEED, PYTHONMALLOC, PYTHONHOME, ...), where a bad value kills
the interpreter before any of our code with Python's own fatal error. Either would fail
only when the run starts (after the model, the probe and the runs before it), so they are
tried at planning time: the command looked up on that PATH (it must be this environment's,
the one planning finds, or the run would start another copy's), an interpreter that does
nothing started with those variables; so are the variables a library the trainer imports
reads and refuses then (an interpreter that imports it)."""

from __future__ import annotations

import codecs
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from sacscale.pipeline.plan_values import PlanError, shown_path

_TRIED: dict[tuple, str | None] = {}  # one try per distinct env in a process
_EXCEPTION_LINE = re.compile(r"[A-Za-z_.]*(Error|Exception)(:|$)")


# variables a library reads as the trainer imports it, and refuses there: the run failed
# at its start (TORCH_LOGS=x: `ValueError: Invalid log settings`; MUJOCO_GL=x: its
# collector's traceback). An interpreter that imports the library tries them.
LIBRARY_ENV = {"TORCH_LOGS": "torch", "MUJOCO_GL": "mujoco"}


# variables that put code of their own into the run: the dynamic loader's libraries in
# every process (trainer, ranks, collectors), the callable Python imports and calls at a
# breakpoint() (in the trainer or a library); code the run's record names by its value
# alone. Each with what its value is, and the value that turns it off where it has one.
# Where the libraries and modules the trainer asks for are found (LD_LIBRARY_PATH,
# PYTHONPATH) is judged by code_paths_env.
FOREIGN_CODE_ENV = {
    "LD_AUDIT": ("the dynamic loader would load {} into every process of the run", "path", None),
    "LD_PRELOAD": ("the dynamic loader would load {} into every process of the run", "path", None),
    "PYTHONBREAKPOINT": ("Python would import and call {} at a breakpoint() anywhere in the run", "name", "0"),
    # MODULE:CLASS that Triton imports to keep (or fetch) compiled kernels
    "TRITON_CACHE_MANAGER": ("Triton would import {} and run it as its kernel cache", "name", None),
    "TRITON_REMOTE_CACHE_BACKEND": ("Triton would import {} and run it as its remote kernel cache", "name", None),
    # Python searches the folders above this executable for a standard library (lib/python3.X/os.py)
    # and a pyvenv.cfg, on Linux too: any of them, a shared /tmp among them, could give its code
    "PYTHONEXECUTABLE": ("Python would take its standard library from the folders above {}, where it searches "
                         "for one", "path", None),
}


# variables that move where Python finds its packages: the trainer's `sacscale` could be another copy
IMPORT_PATH_ENV = ("PYTHONPATH", "PYTHONHOME", "PYTHONUSERBASE", "PYTHONPLATLIBDIR", "PYTHONNOUSERSITE")
_PACKAGE = Path(__file__).resolve().parents[1]  # this checkout's sacscale, whose code the run records
_FIND_PACKAGE = "import importlib.util as u; s = u.find_spec('sacscale'); print(s.origin if s and s.origin else '')"


def _imported_package(env: dict[str, str]) -> Path | None:
    """The folder of the `sacscale` package a Python started with `env` would import (found,
    not imported: none of its code runs); None where it finds none."""
    try:
        done = subprocess.run([sys.executable, "-P", "-c", _FIND_PACKAGE], env={**os.environ, **env},
                              capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)
    except (OSError, subprocess.SubprocessError):
        return None
    origin = done.stdout.strip()
    return Path(origin).resolve().parent if done.returncode == 0 and origin else None


def _package_problem(env: dict[str, str]) -> str | None:
    """Where a run's import path variables would have the trainer import a `sacscale` package
    other than this checkout's: its record (run.json's code, environment.json's commit and
    diff) names this checkout's code, not the copy that ran."""
    moved = sorted(k for k in env if k in IMPORT_PATH_ENV)
    if not moved:
        return None
    found = _imported_package(env)
    if found == _PACKAGE:
        return None
    does = f"imports sacscale from {shown_path(found)}" if found else "finds no sacscale package"
    return (f"{', '.join(moved)}: the trainer started with them {does}, not this checkout's "
            f"{shown_path(_PACKAGE)}, whose code the run's record names; leave them out, or name folders "
            "that hold no other sacscale package")


# variables that choose Python's file-system encoding: under a C/POSIX locale that Python does
# not coerce to C.UTF-8 (LC_ALL, or PYTHONCOERCECLOCALE=0) with UTF-8 mode off it is ASCII
ENCODING_ENV = ("LC_ALL", "LC_CTYPE", "LANG", "PYTHONUTF8", "PYTHONCOERCECLOCALE")


def _file_system_encoding(env: dict[str, str]) -> str | None:
    """The file-system encoding of a Python started with `env` (None where it cannot tell)."""
    try:
        done = subprocess.run([sys.executable, "-P", "-c", "import sys; print(sys.getfilesystemencoding())"],
                              env={**os.environ, **env}, capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, timeout=120)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None


def _start_problem(env: dict[str, str], imports: tuple[str, ...] = ()) -> str | None:
    key = (tuple(sorted(env.items())), imports)
    if key not in _TRIED:
        code = "; ".join(f"import {name}" for name in imports) or "pass"
        try:
            # -P: planning runs in Snakemake's working folder, whose modules are not the run's
            done = subprocess.run([sys.executable, "-P", "-c", code], env={**os.environ, **env}, capture_output=True,
                                  stdin=subprocess.DEVNULL, timeout=120)
        except (OSError, subprocess.SubprocessError) as exc:
            _TRIED[key] = f"cannot start ({exc})"
        else:
            lines = done.stderr.decode(errors="replace").strip().splitlines()
            # Python's own fatal error is its first line; a library's, the traceback's exception line
            raised = [i for i, line in enumerate(lines) if _EXCEPTION_LINE.match(line)]
            traceback = raised and lines[0].startswith("Traceback")
            shown = " ".join(" ".join(lines[raised[-1]:]).split()) if traceback else lines[0] if lines else ""
            _TRIED[key] = None if done.returncode == 0 else (shown or f"exit {done.returncode}")
    return _TRIED[key]


def _warnings_problem(value: str) -> str | None:
    """A PYTHONWARNINGS filter whose action is `error` (or any prefix Python accepts for it,
    `e`, `err`): Python starts, then the first warning a library gives (a deprecation in
    torch or gymnasium) ends the run, after the model and the probe."""
    for spec in value.split(","):
        action = spec.split(":", 1)[0].strip().lower()
        if action and "error".startswith(action):
            return f"its filter {spec.strip()[:60]!r} makes every matching warning an error that would end the run"
    return None


def _io_encoding_problem(value: str) -> str | None:
    """A PYTHONIOENCODING (`encoding[:errors]`) other than UTF-8: Python starts with any codec
    it knows, then writes the run's output in it (utf-16: train.log unreadable as text, and a
    library's helper process fails on it with a traceback); an ASCII-only one fails on the
    first character beyond it. The logs are read, and the progress echoed, as UTF-8."""
    encoding, _, errors = value.partition(":")
    if encoding.strip():
        try:
            name = codecs.lookup(encoding.strip()).name
        except LookupError:
            return f"{encoding.strip()[:40]!r} is not an encoding Python knows"
        if name != "utf-8":
            return (f"{encoding.strip()[:40]!r} ({name}) would write the run's output (train.log) in it, "
                    "not in UTF-8, which its logs are read as")
    if errors.strip():
        try:
            codecs.lookup_error(errors.strip())
        except LookupError:
            return f"{errors.strip()[:40]!r} is not an error handler Python knows"
    return None


def _own_commands(command: str) -> set[str]:
    """The real paths of this environment's `command`: the one the PATH planning runs with
    finds, and the one beside this interpreter (a venv's console script)."""
    beside = Path(sys.executable).parent / command  # not resolved: a venv's python is a link out of it
    found = [shutil.which(command), str(beside) if os.sep not in command and beside.is_file() else None]
    return {os.path.realpath(path) for path in found if path}


def _command_problem(path: str, command: str) -> str | None:
    """Why the run's `command`, looked up on its PATH as the run wrapper looks it up, would
    not start this environment's trainer: none there, or another copy's (another venv's
    console script, which imports its own package while the record names this checkout's)."""
    found = shutil.which(command, path=path)
    if found is None:
        return (f"does not hold {command!r}, the trainer's command: the run could not start; leave PATH out or "
                "add the folder that holds it")
    own = _own_commands(command)
    if not own or os.path.realpath(found) in own:
        return None
    return (f"finds {command!r}, the trainer's command, at {shown_path(found)}, not this environment's "
            f"{shown_path(sorted(own)[0])}: the run would start that copy while its record names this "
            "checkout's code; leave PATH out or put this environment's folder first")


def check_interpreter_env(env: dict[str, str], where: str, command: str = "sacscale") -> None:
    """PlanError naming `where` when the PATH `env` gives does not find this environment's
    `command` for the run, or Python does not start with the PYTHON* variables of `env`."""
    if "PATH" in env and (problem := _command_problem(str(env["PATH"]), command)):
        raise PlanError(f"{where}: PATH {env['PATH'][:80]!r} {problem}")
    if "PYTHONWARNINGS" in env and (problem := _warnings_problem(env["PYTHONWARNINGS"])):
        raise PlanError(f"{where}: PYTHONWARNINGS: {problem}; leave it out, or use 'ignore' / 'default' actions")
    if "PYTHONIOENCODING" in env and (problem := _io_encoding_problem(str(env["PYTHONIOENCODING"]))):
        raise PlanError(f"{where}: PYTHONIOENCODING: {problem}; leave it out, or give utf-8")
    if env.get("PYTHONINSPECT"):
        raise PlanError(f"{where}: PYTHONINSPECT: Python would open its interactive prompt when the trainer "
                        "ends (the run then waits for input, or fails on its end); leave it out")
    for name, (does, value_is, off) in FOREIGN_CODE_ENV.items():
        if env.get(name) and env[name] != off:
            raise PlanError(f"{where}: {name}: {does.format(repr(env[name][:80]))}, code that is not the trainer's "
                            f"and that its record names by {value_is} alone; leave it out")
    if env.get("PYTHONPYCACHEPREFIX"):
        # verify-env judges the bytecode where the pipeline's own processes look, not here
        raise PlanError(f"{where}: PYTHONPYCACHEPREFIX: the run's Python would load the package's compiled "
                        f"bytecode from {shown_path(env['PYTHONPYCACHEPREFIX'])}, which verify-env does not judge: "
                        "bytecode compiled from other code there would run while the record names this "
                        "checkout's; leave it out, or export it where snakemake runs (verify-env judges that one)")
    python = {k: v for k, v in env.items() if k.startswith("PYTHON")}
    if python and (problem := _start_problem(python)):
        raise PlanError(f"{where}: Python does not start with {', '.join(sorted(python))} as given "
                        f"({problem[:160]}); fix or leave out the value")
    if problem := _package_problem({k: str(v) for k, v in python.items()}):
        raise PlanError(f"{where}: {problem}")
    encoding_set = {k: str(v) for k, v in env.items() if k in ENCODING_ENV}
    # the run's own paths are relative ASCII, but its records also name the set folder, the
    # checkout and the model, any of which may be named with non-ASCII letters
    if encoding_set and (encoding := _file_system_encoding({**python, **encoding_set})) not in (None, "utf-8"):
        raise PlanError(f"{where}: {', '.join(sorted(encoding_set))}: Python's file-system encoding would be "
                        f"{encoding}, not UTF-8 (a C/POSIX locale, not coerced, with UTF-8 mode off), so a "
                        "non-ASCII folder name (the set's, the checkout's) would fail the run's UTF-8 records "
                        "after the model and the probe; leave them out, or set PYTHONUTF8=1 or a UTF-8 locale")
    library = {k: str(v) for k, v in env.items() if k in LIBRARY_ENV}
    imports = tuple(sorted({LIBRARY_ENV[k] for k in library}))
    if library and (problem := _start_problem({**python, **library}, imports)):
        raise PlanError(f"{where}: {', '.join(sorted(library))} as given stop(s) the trainer's import of "
                        f"{', '.join(imports)} ({problem[:200]}); fix or leave out the value")
