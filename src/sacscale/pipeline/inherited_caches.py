"""The caches of compiled code a command inherits from its environment (or from Python's
`-X pycache_prefix` option, which PYTHONPYCACHEPREFIX yields to), judged as the package is
first imported (sacscale/__init__) and again before a command's module is. Not before Python
itself reads bytecode: it loads `sacscale/__init__` and the modules this check imports from
the prefix before any of our code can run, so a prefix another user may write is refused
after their bytecode for those modules may already have run: the refusal is a warning that
it may have, not protection. Only a command started without a prefix (the variable unset, or
`python -X pycache_prefix= -m sacscale ...`, which clears it) is safe from that.
Python loads bytecode from PYTHONPYCACHEPREFIX; Inductor,
Triton, CUDA and torch's C++ extensions load back the kernels and libraries they compiled
into the folders their variables name. A run's configured `env` is judged at planning
(code_paths_env); a value the user's shell exported reaches every command and every run the
pipeline starts without passing there, so it is judged by the same rule: the folders on the
way as the kernel walks them (another user's link or folder refused), the folder and what is
in it, or, where it is not made yet, the folder it would be made in. Importing torch's
compiler modules makes TORCHINDUCTOR_CACHE_DIR on the spot (torch._inductor's cache_dir,
`makedirs`), through whatever link lies on the way, so no later check can keep a folder from
being made there."""

from __future__ import annotations

import multiprocessing
import os
import sys

# variables naming a folder that code is compiled into and loaded back from; not the folders
# of code a user points at on purpose (PYTHONPATH, LD_LIBRARY_PATH, CUDA_HOME), which are
# theirs to choose
INHERITED_CODE_CACHES = (
    "PYTHONPYCACHEPREFIX", "TORCHINDUCTOR_CACHE_DIR", "TRITON_CACHE_DIR", "TRITON_HOME", "TRITON_OVERRIDE_DIR",
    "TORCH_EXTENSIONS_DIR", "PYTORCH_KERNEL_CACHE_PATH", "CUDA_CACHE_PATH",
)
# torch takes this one through os.path.abspath, `..` removed as text, and exports that to its
# children; the kernel (and Triton, CUDA, Python with the others) walk the name as written
LEXICALLY_NORMALISED = frozenset({"TORCHINDUCTOR_CACHE_DIR"})
_PLANNING_CURE = " in the run: name a folder of your own"


class InheritedCacheError(ValueError):
    """An inherited code cache another user could put code in: bad input (exit 2)."""


_FROM_ENVIRONMENT = "inherited from the environment"
_FROM_OPTION = "given to Python on its command line"
_VARIABLE = {"-X pycache_prefix": "PYTHONPYCACHEPREFIX"}  # the option judged as the variable it overrides


def check_inherited_caches(environ=os.environ, xoptions: dict | None = None) -> None:
    """InheritedCacheError naming the first code-cache variable of `environ`, or Python's
    `-X pycache_prefix` option (`xoptions`: this interpreter's), whose folder another user
    could put code in, or that is no folder."""
    xoptions = sys._xoptions if xoptions is None else xoptions
    given = xoptions.get("pycache_prefix")
    if isinstance(given, str) and given:  # `-X pycache_prefix=` (empty) turns the prefix off
        for path in _as_read("-X pycache_prefix", given):
            _judge("-X pycache_prefix", given, path, _FROM_OPTION)
    for name in INHERITED_CODE_CACHES:
        value = environ.get(name)
        if not value or (name == "PYTHONPYCACHEPREFIX" and "pycache_prefix" in xoptions):
            continue  # unset, or empty (each reader takes it as unset), or overridden by -X
        for path in _as_read(name, value):
            _judge(name, value, path, _FROM_ENVIRONMENT)


def _as_read(name: str, value: str) -> list[str]:
    """The names the variable's readers walk: as written, and torch's lexical form."""
    paths = [value]
    if name in LEXICALLY_NORMALISED and os.path.abspath(value) != _absolute(value):
        paths.append(os.path.abspath(value))
    return paths


def _absolute(path: str) -> str:
    """`path` from the working folder, as the kernel walks it; an absolute one needs no working
    folder (it may have been removed: the command names that itself)."""
    return path if os.path.isabs(path) else os.path.join(os.getcwd(), path)


def _judge(name: str, value: str, path: str, origin: str) -> None:
    # imported only where a variable is set: the planner's rules double the start-up of every command
    from sacscale.atomic import file_kind
    from sacscale.lock_folder import per_process_entry
    from sacscale.pipeline.code_paths_env import check_code_paths
    from sacscale.pipeline.plan_values import PlanError, shown_path

    undo = "unset it" if origin == _FROM_ENVIRONMENT else "leave the option out"
    said = f"{name}={shown_path(value)}" + (f" (read as {shown_path(path)})" if path != value else "")
    if entry := per_process_entry(_absolute(path)):
        at = "" if entry == "/proc" else f" (by {entry})"
        raise InheritedCacheError(f"{said}, {origin}: leads through /proc{at}, whose names "
                                  "each process resolves to its own folders: a different cache in each process; "
                                  f"give the folder's own absolute name, or {undo}")
    try:
        check_code_paths({_VARIABLE.get(name, name): path}, "")
    except PlanError as exc:
        # the planner's "': NAME: 'path' problem; what ... in the run: ...", said of this command
        why = str(exc).split(": ", 2)[-1].removesuffix(_PLANNING_CURE)
        raise InheritedCacheError(f"{said}, {origin}: {why} here: name a folder of your "
                                  f"own, or {undo}") from None
    where, kind = _nearest_entry(_absolute(path), file_kind)
    if kind != "a folder":
        made = "" if where == _absolute(path) else f"cannot be made: {shown_path(where)} "
        raise InheritedCacheError(f"{said}, {origin}: {made}is {kind}, not a folder; name a folder "
                                  f"of your own, or {undo}")


def _nearest_entry(path: str, file_kind) -> tuple[str, str]:
    """(the path, or the nearest folder above it that is there, and what that is): a cache
    not made yet is made in the folder above, which a file there would make impossible."""
    while (kind := file_kind(path)) is None and os.path.dirname(path) != path:
        path = os.path.dirname(path)
    return path, kind or "a folder"


def entry_refusal(argv: list[str] | None = None) -> str | None:
    """The error line of a process whose inherited code caches are refused, as the package
    is first imported (None where they are kept). A bytecode prefix is judged after Python
    has loaded this package's first modules from it, so the line says their code may have run.
    A multiprocessing child (a collector, a spawned rank) is not judged again: its environment
    is its parent's, judged as the parent started, plus the private compile cache the trainer
    made; judging it would load the planner's rules and walk that cache in every child."""
    if multiprocessing.parent_process() is not None:
        return None
    try:
        check_inherited_caches()
    except OSError:  # a relative name with the working folder removed: the command refuses that folder
        return None
    except ImportError:
        # the judging rules need libraries (numpy) an environment may lack: `--help` still
        # answers there, and a command judges again in cli, whose line names the library
        return None
    except InheritedCacheError as exc:
        argv = sys.argv if argv is None else argv
        command = argv[1] if len(argv) > 1 and _is_sacscale(argv[0]) and not argv[1].startswith("-") else ""
        line = f"sacscale{' ' + command if command else ''}: error: {exc}"
        if str(exc).startswith(("PYTHONPYCACHEPREFIX=", "-X pycache_prefix=")):
            line += ("; Python loaded sacscale's first modules from that prefix before they could judge it: "
                     "bytecode put there may already have run as you")
        return line
    return None


def _is_sacscale(program: str) -> bool:
    """Whether argv[0] is this package's command: `sacscale`, or `python -m sacscale[.cli]`."""
    return program == "-m" or os.path.basename(program) == "sacscale"
