"""Compiled bytecode Python would run in place of the package's source. git records the
sources only (`__pycache__/` and `*.pyc` are ignored), and Python trusts a `__pycache__` file
whose header matches its source's modification time and size (or, for a hash-based one, its
hash, or nothing at all): one compiled from other code runs while the record says the tree
is clean. So each source's cached bytecode that this interpreter would load is compiled
again from the source and compared as code objects (what runs: names, constants, bytecode,
line table; not the marshalled bytes, which differ between two compiles of one source). A
module file with no source (`name.pyc` beside the package's modules) is importable too.

Judged as this process would import (its optimisation level, PYTHONPYCACHEPREFIX); the
pipeline's later processes read the same files unless someone writes them in between."""

from __future__ import annotations

import _imp
import marshal
import os
from importlib.machinery import SourceFileLoader
from importlib.util import MAGIC_NUMBER, cache_from_source, source_hash
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parents[1]
_HEADER = 16


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


def _other_code(source: Path) -> str | None:
    """The cached bytecode of `source` that would run and holds other code, or None."""
    try:
        cached = Path(cache_from_source(str(source)))
        pyc = cached.read_bytes()
    except (OSError, ValueError):  # none cached, or none it could be
        return None
    source_bytes = source.read_bytes()
    if not _would_load(pyc, source, source_bytes):
        return None
    try:
        held = marshal.loads(pyc[_HEADER:])
    except (ValueError, EOFError, TypeError):
        return None  # the import fails on it: nothing runs
    fresh = SourceFileLoader(source.stem, str(source)).source_to_code(source_bytes, str(source))
    return None if held == fresh else str(cached)


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
                cached = _other_code(path)
                if cached:
                    problems.append(f"{path}: its compiled bytecode {cached}, which Python runs in place of the "
                                    "source (its header matches the source), holds other code")
            elif name.endswith(".pyc") and not (here / f"{name[:-1]}").exists():
                problems.append(f"{path}: compiled bytecode with no source beside the package's modules, which "
                                "Python imports by its name; git records no such file")
    return problems
