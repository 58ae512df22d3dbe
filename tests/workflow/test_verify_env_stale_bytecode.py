"""Bytecode that runs in place of the recorded source. Before: a `__pycache__` file compiled
from other code, its header matching the tracked source's time and size, ran while verify-env
recorded a clean tree (git ignores `__pycache__/`). Now verify-env --diff-output compiles each
source whose cached bytecode Python would load and refuses code objects that differ, and a
module file with no source; bytecode compiled from the sources themselves passes. Every
optimisation level's cache file is judged: a stale `.opt-2.pyc` passed and then ran in a run
whose env set PYTHONOPTIMIZE=2. The refusal says the command may already have run it."""

import os
import py_compile
import shutil
import subprocess
import sys
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


def _compile_all(folder, mode=py_compile.PycInvalidationMode.TIMESTAMP, level=0):
    for path in folder.rglob("*.py"):
        py_compile.compile(str(path), cfile=cache_from_source(str(path), optimization=level or ""), doraise=True,
                           invalidation_mode=mode, optimize=level)


def _plant_stale(source, mode=py_compile.PycInvalidationMode.TIMESTAMP, level=0):
    """`source`'s cached bytecode (of optimisation `level`) compiled from other code of its
    size, its time put back."""
    stat = source.stat()
    source.write_text(PLANTED)
    os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    cached = cache_from_source(str(source), optimization=level or "")
    py_compile.compile(str(source), cfile=cached, doraise=True, invalidation_mode=mode, optimize=level)
    source.write_text(SOURCE)
    os.utime(source, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    return cached


@pytest.mark.parametrize("level", [0, 1, 2])
@pytest.mark.parametrize("mode", list(py_compile.PycInvalidationMode), ids=lambda m: m.name)
def test_bytecode_compiled_from_the_sources_passes(package, mode, level):
    (package / "usage.py").write_text('"""A docstring -OO leaves out."""\nassert VALUE\nVALUE = 1\n')
    _compile_all(package, mode, level)
    assert bytecode_problems(package) == []


def test_stale_bytecode_valid_by_time_and_size_is_named(package):
    _compile_all(package)
    _plant_stale(package / "usage.py")
    assert bytecode_problems(package) == [
        f"{package / 'usage.py'}: its compiled bytecode {cache_from_source(str(package / 'usage.py'))}, which Python "
        "runs in place of the source (its header matches the source), holds other code"]


@pytest.mark.parametrize("level, who", [(1, "-O or PYTHONOPTIMIZE=1"), (2, "-OO or PYTHONOPTIMIZE=2")], ids=["O", "OO"])
def test_stale_bytecode_of_an_optimisation_level_is_named(package, level, who):
    """A run whose env sets PYTHONOPTIMIZE loads `name.<tag>.opt-N.pyc`, not the plain file."""
    _compile_all(package)
    cached = _plant_stale(package / "usage.py", level=level)
    assert bytecode_problems(package) == [
        f"{package / 'usage.py'}: its compiled bytecode {cached}, which Python run with {who} runs in place of the "
        "source (its header matches the source), holds other code"]
    ran = subprocess.run([sys.executable, "-c", "import usage; print(usage.VALUE)"], cwd=package, text=True,
                         capture_output=True, env={**os.environ, "PYTHONOPTIMIZE": str(level)}, check=True)
    assert ran.stdout == "7\n"  # the planted code ran, which the check is there to name


def test_a_level_above_two_is_judged_as_minus_oo(package):
    """PYTHONOPTIMIZE=3 loads `.opt-3.pyc`, compiled as -OO compiles."""
    stale = _plant_stale(package / "usage.py", level=2)
    opt3 = stale.replace(".opt-2.pyc", ".opt-3.pyc")
    shutil.copyfile(stale, opt3)
    _compile_all(package, level=2)  # the opt-2 file compiled from the source again: only opt-3 is stale
    usage = package / "usage.py"
    assert bytecode_problems(package) == [
        f"{usage}: its compiled bytecode {opt3}, which Python run with PYTHONOPTIMIZE=3 runs in place of the source "
        "(its header matches the source), holds other code"]


def test_another_interpreters_bytecode_is_left(package):
    """Another Python's cache file: this one cannot compile that Python's code to compare, and
    verify names a run whose interpreter is not environment.json's."""
    stale = _plant_stale(package / "usage.py")
    os.replace(stale, stale.replace(sys.implementation.cache_tag, "cpython-399"))
    assert bytecode_problems(package) == []


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
                       "place of the source (its header matches the source), holds other code, which this command "
                       "may already have run (it imports the package before it can judge its bytecode): remove it "
                       "(Python compiles the source again) and run again"), err
    assert not out.exists() and not diff.exists()


def test_this_checkout_passes():
    assert bytecode_problems() == []
