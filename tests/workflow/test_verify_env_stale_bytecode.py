"""Bytecode that runs in place of the recorded source. Before: a `__pycache__` file compiled
from other code, its header matching the tracked source's time and size, ran while verify-env
recorded a clean tree (git ignores `__pycache__/`). Now verify-env --diff-output compiles each
source whose cached bytecode Python would load and refuses code objects that differ, and a
module file with no source; bytecode compiled from the sources themselves passes."""

import os
import py_compile
from importlib.util import cache_from_source

import pytest

from sacscale.cli import main
from sacscale.pipeline import stale_bytecode
from sacscale.pipeline.stale_bytecode import bytecode_problems

SOURCE = "import sys\nVALUE = 1\n"
PLANTED = "import abc\nVALUE = 7\n"  # the same size, other code


@pytest.fixture
def package(tmp_path):
    folder = tmp_path / "pkg"
    (folder / "sub").mkdir(parents=True)
    for path in (folder / "__init__.py", folder / "usage.py", folder / "sub" / "__init__.py"):
        path.write_text(SOURCE)
    return folder


def _compile_all(folder, mode=py_compile.PycInvalidationMode.TIMESTAMP):
    for path in folder.rglob("*.py"):
        py_compile.compile(str(path), cfile=cache_from_source(str(path)), doraise=True, invalidation_mode=mode)


def _plant_stale(source, mode=py_compile.PycInvalidationMode.TIMESTAMP):
    """`source`'s cached bytecode compiled from other code of its size, its time put back."""
    stat = source.stat()
    source.write_text(PLANTED)
    os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    py_compile.compile(str(source), cfile=cache_from_source(str(source)), doraise=True, invalidation_mode=mode)
    source.write_text(SOURCE)
    os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns))


@pytest.mark.parametrize("mode", list(py_compile.PycInvalidationMode), ids=lambda m: m.name)
def test_bytecode_compiled_from_the_sources_passes(package, mode):
    _compile_all(package, mode)
    assert bytecode_problems(package) == []


def test_stale_bytecode_valid_by_time_and_size_is_named(package):
    _compile_all(package)
    _plant_stale(package / "usage.py")
    assert bytecode_problems(package) == [
        f"{package / 'usage.py'}: its compiled bytecode {cache_from_source(str(package / 'usage.py'))}, which Python "
        "runs in place of the source (its header matches the source), holds other code"]


def test_unchecked_hash_bytecode_of_other_code_is_named(package):
    _plant_stale(package / "sub" / "__init__.py", py_compile.PycInvalidationMode.UNCHECKED_HASH)
    assert len(bytecode_problems(package)) == 1


def test_bytecode_python_would_not_load_is_left(package):
    """A header that no longer matches its source: Python compiles the source again."""
    _plant_stale(package / "usage.py")
    os.utime(package / "usage.py", (1, 1))
    assert bytecode_problems(package) == []


def test_a_module_file_with_no_source_is_named(package):
    py_compile.compile(str(package / "usage.py"), cfile=str(package / "sub" / "json.pyc"), doraise=True)
    assert bytecode_problems(package) == [
        f"{package / 'sub' / 'json.pyc'}: compiled bytecode with no source beside the package's modules, which Python "
        "imports by its name; git records no such file"]


def test_verify_env_refuses_to_record_it(package, tmp_path, monkeypatch, capsys):
    _compile_all(package)
    _plant_stale(package / "usage.py")
    monkeypatch.setattr(stale_bytecode, "PACKAGE_DIR", package)
    out, diff = tmp_path / "env.json", tmp_path / "source.diff"
    assert main(["verify-env", "--output", str(out), "--diff-output", str(diff)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    usage = package / "usage.py"
    assert err[-1] == (f"sacscale verify-env: error: --diff-output: the code cannot be recorded: {usage}: "
                       f"its compiled bytecode {cache_from_source(str(package / 'usage.py'))}, which Python runs in "
                       "place of the source (its header matches the source), holds other code: remove it (Python "
                       "compiles the source again) and run again"), err
    assert not out.exists() and not diff.exists()


def test_this_checkout_passes():
    assert bytecode_problems() == []
