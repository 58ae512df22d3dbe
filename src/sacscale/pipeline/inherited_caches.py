"""The caches of compiled code a command inherits from its environment, judged before the
command's modules are imported. Python loads bytecode from PYTHONPYCACHEPREFIX; Inductor,
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

import os

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


def check_inherited_caches(environ=os.environ) -> None:
    """InheritedCacheError naming the first code-cache variable of `environ` whose folder
    another user could put code in, or that is no folder."""
    for name in INHERITED_CODE_CACHES:
        value = environ.get(name)
        if not value:  # unset, or empty: each reader takes an empty value as unset
            continue
        for path in _as_read(name, value):
            _judge(name, value, path)


def _as_read(name: str, value: str) -> list[str]:
    """The names the variable's readers walk: as written, and torch's lexical form."""
    paths = [value]
    if name in LEXICALLY_NORMALISED and os.path.abspath(value) != os.path.join(os.getcwd(), value):
        paths.append(os.path.abspath(value))
    return paths


def _judge(name: str, value: str, path: str) -> None:
    # imported only where a variable is set: the planner's rules double the start-up of every command
    from sacscale.atomic import file_kind
    from sacscale.lock_folder import per_process_entry
    from sacscale.pipeline.code_paths_env import check_code_paths
    from sacscale.pipeline.plan_values import PlanError, shown_path

    said = f"{name}={shown_path(value)}" + (f" (read as {shown_path(path)})" if path != value else "")
    if entry := per_process_entry(os.path.join(os.getcwd(), path)):
        at = "" if entry == "/proc" else f" (by {entry})"
        raise InheritedCacheError(f"{said}, inherited from the environment: leads through /proc{at}, whose names "
                                  "each process resolves to its own folders: a different cache in each process; "
                                  "give the folder's own absolute name, or unset it")
    try:
        check_code_paths({name: path}, "")
    except PlanError as exc:
        # the planner's "': NAME: 'path' problem; what ... in the run: ...", said of this command
        why = str(exc).split(": ", 2)[-1].removesuffix(_PLANNING_CURE)
        raise InheritedCacheError(f"{said}, inherited from the environment: {why} here: name a folder of your "
                                  "own, or unset it") from None
    kind = file_kind(path)
    if kind not in (None, "a folder"):
        raise InheritedCacheError(f"{said}, inherited from the environment: is {kind}, not a folder; name a folder "
                                  "of your own, or unset it")
