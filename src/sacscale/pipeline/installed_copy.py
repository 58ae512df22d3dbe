"""Whether an installed (non-editable) copy of the package is a checkout's code.

Python imports more than `.py` files from a package folder: an extension module
(`usage.cpython-311-x86_64-linux-gnu.so`, any suffix of importlib.machinery.EXTENSION_SUFFIXES)
is found before the source of the same name, and a `.pyc` outside `__pycache__` is imported
where no source is. So every such file of the copy must be the checkout's, byte for byte, and
the checkout's the copy's; the bytecode Python writes into `__pycache__` is compiled from the
sources compared, and is not."""

from __future__ import annotations

from importlib.machinery import BYTECODE_SUFFIXES, EXTENSION_SUFFIXES, SOURCE_SUFFIXES
from pathlib import Path

IMPORTABLE_SUFFIXES = tuple(dict.fromkeys([*SOURCE_SUFFIXES, *BYTECODE_SUFFIXES, *EXTENSION_SUFFIXES]))


def _importable(path: Path, root: Path) -> bool:
    return path.name.endswith(IMPORTABLE_SUFFIXES) and "__pycache__" not in path.relative_to(root).parts


def importable_files(root: Path) -> dict[str, bytes]:
    """Each file under `root` Python could import as code, by its name relative to `root`."""
    return {path.relative_to(root).as_posix(): path.read_bytes() for path in sorted(root.rglob("*"))
            if _importable(path, root) and path.is_file()}


def installed_copy_differences(package_dir: Path, checkout: Path) -> list[str]:
    """The importable files that differ between an installed copy of the package and a
    checkout's src/sacscale, either way (one only the copy holds among them); empty when they
    are the same code."""
    source = checkout / "src" / "sacscale"
    if not source.is_dir():
        return ["src/sacscale (absent)"]
    installed, checked_out = importable_files(package_dir), importable_files(source)
    return sorted(n for n in installed.keys() | checked_out.keys() if installed.get(n) != checked_out.get(n))
