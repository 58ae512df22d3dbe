"""`python -m sacscale ...` run from a folder holding a module named as a library's. Before:
Python put the working folder first on the command's own import path, so a sourceless
`json.pyc` there (ignored by git's `*.pyc`, so in no record) ran while the record said the
code was clean. Now the package takes the folder off its path as it is first imported, before
any other module is read; a module Python's module runner read from it before that refuses
the command."""

import os
import py_compile
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"


def _plant(folder: Path, name: str, sourceless: bool, marker: Path) -> None:
    """A module `name` in `folder` that records its import in `marker` and stops the process."""
    source = folder / f"{name}.py"
    source.write_text(f"open({str(marker)!r}, 'a').write({name!r} + '\\n')\nraise SystemExit(7)\n")
    if sourceless:
        py_compile.compile(str(source), cfile=str(folder / f"{name}.pyc"))
        source.unlink()


def _run(folder: Path, *args: str, pythonpath: str | None = str(SRC)) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONSAFEPATH", "PYTHONPATH")}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    return subprocess.run([sys.executable, *args], cwd=folder, env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("module", ["sacscale", "sacscale.cli"])
@pytest.mark.parametrize("sourceless", [True, False], ids=["json.pyc", "json.py"])
def test_a_json_module_in_the_working_folder_is_not_run(tmp_path, module, sourceless):
    folder, marker = tmp_path / "checkout", tmp_path / "ran"
    folder.mkdir()
    _plant(folder, "json", sourceless, marker)
    done = _run(folder, "-m", module, "--help")
    assert not marker.exists()
    assert done.returncode == 0 and done.stdout.startswith("usage: sacscale"), done.stderr


def test_run_from_the_folder_holding_the_package_it_is_found_after_the_libraries(tmp_path):
    """`cd src; python -m sacscale`: the package is the working folder's, still found (as the
    trainer's spawned children find it, through this path), but after the standard library."""
    folder, marker = tmp_path / "src", tmp_path / "ran"
    shutil.copytree(SRC / "sacscale", folder / "sacscale", ignore=shutil.ignore_patterns("__pycache__"))
    _plant(folder, "json", True, marker)
    done = _run(folder, "-m", "sacscale", "--help", pythonpath=None)
    assert not marker.exists()
    assert done.returncode == 0 and done.stdout.startswith("usage: sacscale"), done.stderr


def test_a_module_read_before_the_package_refuses_the_command(tmp_path):
    """Python's module runner reads `keyword` (for collections) before any of our code; one
    standing in for it in the working folder cannot be undone, so the command is refused."""
    folder, marker = tmp_path / "checkout", tmp_path / "ran"
    folder.mkdir()
    (folder / "keyword.py").write_text(f"open({str(marker)!r}, 'a').write('keyword')\n"
                                       "kwlist, softkwlist = [], []\n"
                                       "iskeyword = issoftkeyword = frozenset().__contains__\n")
    done = _run(folder, "-m", "sacscale", "--version")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (f"sacscale: error: python -m read keyword ({folder / 'keyword.py'}) from the working "
                           f"folder {folder} before sacscale started, not the standard library's or an installed "
                           "package's: remove it, or run the `sacscale` command (or `python -P -m sacscale`), which "
                           "leaves the working folder off the import path\n")
    # -P keeps the folder off from the start: the module runner reads the standard library's
    assert _run(folder, "-P", "-m", "sacscale", "--version").stdout == "sacscale 0.1.0\n"
