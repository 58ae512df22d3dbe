"""Compiled bytecode Python would run in place of the package's source. git records the
sources only (`__pycache__/` and `*.pyc` are ignored), and Python trusts a `__pycache__` file
whose header matches its source's modification time and size (or, for a hash-based one, its
hash, or nothing at all): one compiled from other code runs while the record says the tree
is clean. So each source's cached bytecode that this interpreter would load is compiled
again from the source and compared as code objects (what runs: names, constants, bytecode,
line table; not the marshalled bytes, which differ between two compiles of one source). A
module file with no source (`name.pyc` beside the package's modules) is importable too.

Every optimisation level's file is judged (`name.<tag>.pyc`, and `.opt-N.pyc`, which a
process run with -O, -OO or PYTHONOPTIMIZE=N loads; a run's env may set PYTHONOPTIMIZE), each
against the source compiled at that level. Only this interpreter's tag (cpython-311): another
Python's bytecode cannot be compiled here to compare, and the runs use this interpreter (verify
names a run.json `python` or train_meta.json version other than environment.json's).
Judged where this process looks (PYTHONPYCACHEPREFIX); the pipeline's later processes read the
same files unless someone writes them in between."""

from __future__ import annotations

import _imp
import marshal
import os
import sys
from importlib.util import MAGIC_NUMBER, cache_from_source, source_hash
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parents[1]
_HEADER = 16
_RUN_WITH = {1: "-O or PYTHONOPTIMIZE=1", 2: "-OO or PYTHONOPTIMIZE=2"}


def _would_load(pyc: bytes, source: Path, source_bytes: bytes) -> bool:
    """Whether the import system takes `pyc` for `source` (importlib's header checks)."""
    if len(pyc) < _HEADER or pyc[:4] != MAGIC_NUMBER:
        return False
    flags = int.from_bytes(pyc[4:8], "little")
    if flags & ~0b11:
        return False  # the import fails on it: nothing runs
    if flags & 0b01:  # hash-based: checked against the source's hash, or not checked at all
        checked = _imp.check_hash_based_pycs == "always" or (
            _imp.check_hash_based_pycs == "default" and flags & 0b10)
        return not checked or pyc[8:16] == source_hash(source_bytes)
    stat = source.stat()
    return (int.from_bytes(pyc[8:12], "little") == int(stat.st_mtime) & 0xFFFFFFFF
            and int.from_bytes(pyc[12:16], "little") == stat.st_size & 0xFFFFFFFF)


def _cached_levels(source: Path) -> list[tuple[int, Path]]:
    """(optimisation level, cache file) for each of `source`'s cache files this interpreter
    would read at some level: `name.<tag>.pyc` (0) and `name.<tag>.opt-N.pyc` (N)."""
    plain = Path(cache_from_source(str(source), optimization=""))
    prefix = f"{source.stem}.{sys.implementation.cache_tag}.opt-"
    try:
        names = os.listdir(plain.parent)
    except OSError:
        return []
    levels = [(0, plain)] if plain.name in names else []
    for name in sorted(names):
        level = name[len(prefix):-len(".pyc")] if name.startswith(prefix) and name.endswith(".pyc") else ""
        if level.isdigit() and str(int(level)) == level and int(level) > 0:
            levels.append((int(level), plain.parent / name))
    return levels


def _holds_other_code(pyc: bytes, source: Path, source_bytes: bytes, level: int) -> bool:
    """Whether the import system takes `pyc` for `source` and it is not the source compiled
    at `level` (-OO and above compile alike)."""
    if not _would_load(pyc, source, source_bytes):
        return False
    try:
        held = marshal.loads(pyc[_HEADER:])
    except (ValueError, EOFError, TypeError):
        return False  # the import fails on it: nothing runs
    return held != compile(source_bytes, str(source), "exec", dont_inherit=True, optimize=min(level, 2))


def _other_code(source: Path) -> list[tuple[int, str]]:
    """(level, path) of each cached bytecode of `source` that would run and holds other code."""
    try:
        levels = _cached_levels(source)
    except ValueError:  # none it could be (no cache folder for it)
        return []
    found, source_bytes = [], None
    for level, cached in levels:
        try:
            pyc = cached.read_bytes()
            source_bytes = source.read_bytes() if source_bytes is None else source_bytes
        except OSError:
            continue
        if _holds_other_code(pyc, source, source_bytes, level):
            found.append((level, str(cached)))
    return found


def _who_runs(level: int) -> str:
    """Who loads the cache file of an optimisation level."""
    if level == 0:
        return "Python"
    return f"Python run with {_RUN_WITH.get(level, f'PYTHONOPTIMIZE={level}')}"


def bytecode_problems(package_dir: Path | None = None) -> list[str]:
    """One line per module of the package (this code's, unless given) whose code would come
    from bytecode that is not its source's: stale cached bytecode, or a module file with no source."""
    problems = []
    for folder, dirs, files in os.walk(package_dir or PACKAGE_DIR):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        here = Path(folder)
        for name in sorted(files):
            path = here / name
            if name.endswith(".py"):
                problems += [f"{path}: its compiled bytecode {cached}, which {_who_runs(level)} runs in place of the "
                             "source (its header matches the source), holds other code"
                             for level, cached in _other_code(path)]
            elif name.endswith(".pyc") and not (here / f"{name[:-1]}").exists():
                problems.append(f"{path}: compiled bytecode with no source beside the package's modules, which "
                                "Python imports by its name; git records no such file")
    return problems
