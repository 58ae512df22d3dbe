"""`python -m sacscale ...` run from a folder holding a module named as a library's. Before:
Python put the working folder first on the command's own import path, so a sourceless
`json.pyc` there (ignored by git's `*.pyc`, so in no record) ran while the record said the
code was clean. Now the package takes the folder off its path as it is first imported, before
any other module is read; a module there named as a standard library module (one Python's
module runner had imported before that) refuses the command, judged by the files, and the
line says the planted code may already have run as this user; a module not imported by then is
never read from the folder."""

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


def _refusal(verb: str, planted: str, folder: Path) -> str:
    return (f"sacscale: error: python -m {verb} {planted} from the working folder {folder} as this user "
            f"(uid {os.getuid()}), before sacscale started, in place of the library module of that name: check "
            "what it did and remove it, then run the `sacscale` command (or `python -P -m sacscale`), which never "
            "reads the working folder\n")


@pytest.mark.parametrize("module", ["sacscale", "sacscale.cli"])
@pytest.mark.parametrize("form", ["json.pyc", "json.py", "json/__init__.py"])
def test_a_json_module_in_the_working_folder_is_not_run_and_the_command_goes_on(tmp_path, module, form):
    """json is not among what the module runner reads before the package, which takes the
    folder off the path first: the folder's json is never read, and nothing is refused."""
    folder, marker = tmp_path / "checkout", tmp_path / "ran"
    (folder / "json").mkdir(parents=True)
    _plant(folder / "json" if form.startswith("json/") else folder,
           "__init__" if form.startswith("json/") else "json", form == "json.pyc", marker)
    done = _run(folder, "-m", module, "--help")
    assert not marker.exists()
    assert done.returncode == 0 and done.stdout.startswith("usage: sacscale"), done.stderr


def test_names_no_start_up_reads_from_the_path_are_left_alone(tmp_path):
    """A folder without __init__ only adds a namespace portion, which any module of that name
    on the rest of the path wins over; a name outside the standard library is not read before
    the package (site and .pth files run before the folder is on the path)."""
    folder, marker = tmp_path / "checkout", tmp_path / "ran"
    (folder / "test").mkdir(parents=True)
    (folder / "test" / "notes.txt").write_text("")
    for name in ("numpy", "notes"):
        _plant(folder, name, False, marker)
    done = _run(folder, "-m", "sacscale", "--version")
    assert (done.returncode, done.stdout, done.stderr) == (0, "sacscale 0.1.0\n", "")
    assert not marker.exists()


def test_run_from_the_folder_holding_the_package_it_is_found_after_the_libraries(tmp_path):
    """`cd src; python -m sacscale`: the package is the working folder's, still found (as the
    trainer's spawned children find it, through this path), but after the standard library;
    a standard module the runner read before the package, planted beside it, refuses there too."""
    folder, marker = tmp_path / "src", tmp_path / "ran"
    shutil.copytree(SRC / "sacscale", folder / "sacscale", ignore=shutil.ignore_patterns("__pycache__"))
    done = _run(folder, "-m", "sacscale", "--help", pythonpath=None)
    assert done.returncode == 0 and done.stdout.startswith("usage: sacscale"), done.stderr
    _plant(folder, "json", True, marker)
    done = _run(folder, "-m", "sacscale", "--help", pythonpath=None)
    assert not marker.exists()
    assert done.returncode == 0 and done.stdout.startswith("usage: sacscale"), done.stderr
    planted = _plant_keyword(folder, marker)
    done = _run(folder, "-m", "sacscale", "--help", pythonpath=None)
    assert done.returncode == 2 and done.stderr == _refusal("has already run", f"keyword ({planted})", folder)


def _plant_keyword(folder: Path, marker: Path) -> Path:
    """A `keyword` that works (the module runner reads it, for collections) and leaves a mark."""
    planted = folder / "keyword.py"
    planted.write_text(f"open({str(marker)!r}, 'a').write('keyword')\n"
                       "kwlist, softkwlist = [], []\n"
                       "iskeyword = issoftkeyword = frozenset().__contains__\n")
    return planted


def test_a_module_read_before_the_package_refuses_the_command_saying_it_ran(tmp_path):
    """Python's module runner reads `keyword` (for collections) before any of our code; one
    standing in for it in the working folder has run by then, and the line says so."""
    folder, marker = tmp_path / "checkout", tmp_path / "ran"
    folder.mkdir()
    planted = _plant_keyword(folder, marker)
    done = _run(folder, "-m", "sacscale", "--version")
    assert marker.read_text() == "keyword"
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == _refusal("has already run", f"keyword ({planted})", folder)
    # -P keeps the folder off from the start: the module runner reads the standard library's
    marker.unlink()
    assert _run(folder, "-P", "-m", "sacscale", "--version").stdout == "sacscale 0.1.0\n"
    assert not marker.exists()


def test_a_module_that_put_the_real_one_back_still_refuses_the_command(tmp_path):
    """A planted `warnings` runs, then puts the standard library's in sys.modules in its place:
    sys.modules then says nothing was read from the folder; the file there still refuses."""
    folder, marker = tmp_path / "checkout", tmp_path / "ran"
    folder.mkdir()
    (folder / "warnings.py").write_text(
        "import sys\n"
        f"open({str(marker)!r}, 'a').write('warnings')\n"
        "del sys.modules['warnings']\n"
        "here = sys.path.pop(0)\n"
        "import warnings as real\n"
        "sys.path.insert(0, here)\n"
        "sys.modules['warnings'] = real\n")
    done = _run(folder, "-m", "sacscale", "--version")
    assert marker.read_text() == "warnings"
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == _refusal("may already have run", f"warnings ({folder / 'warnings.py'})", folder)


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="planting as another user needs root")
def test_another_users_module_in_a_shared_folder_refuses_the_command_naming_this_user(tmp_path):
    """The case the check is for: a shared folder, another user's module, this user running."""
    folder, marker = tmp_path / "shared", tmp_path / "ran"
    folder.mkdir()
    folder.chmod(0o1777)
    tmp_path.chmod(0o755)
    planted = _plant_keyword(folder, marker)
    os.chown(planted, 65534, 65534)
    done = _run(folder, "-m", "sacscale", "--version")
    assert done.returncode == 2 and done.stdout == ""
    assert "(uid 0)" in done.stderr and done.stderr == _refusal("has already run", f"keyword ({planted})", folder)
