"""The reference interpreter is judged by what it loads at start, not only as a file: a venv's
`pyvenv.cfg` (beside it or one folder up) names the Python whose standard library, sys.path
and `sitecustomize` it takes (`home`), and an interpreter without one takes them from its
own prefix. Before: only the file was judged, so a venv made with `--copies` (bin/python
root's own program in root's folder) whose `home` is /home/eve/py/bin was started by
reference-env and train-reference, and ran eve's sitecustomize.py as root. Nothing is
started to find out (that would run the code)."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sacscale.cli import main
from sacscale.pipeline.interpreter_check import interpreter_problem
from tests.workflow.test_config_reference_python import refused

AS_ROOT = pytest.mark.skipif(os.geteuid() != 0, reason="another user's folder is made by root (chown)")
TAIL = "it is started as this user, so another user's code could run as this user: name an interpreter of your own"
SYSTEM_PYTHON = Path("/usr/bin/python3")
WITH_SYSTEM_PYTHON = pytest.mark.skipif(not SYSTEM_PYTHON.exists(), reason="no system Python at /usr/bin/python3")


def program(path: Path) -> Path:
    """A file that is no script (an ELF header): judged as an interpreter, never started here."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\x7fELF" + bytes(60))
    path.chmod(0o755)
    return path


def venv(folder: Path, home: str, beside: bool = False) -> Path:
    """A venv's layout: bin/python and its settings naming `home` (one folder up, or beside)."""
    python = program(folder / "bin" / "python")
    (folder / ("bin/pyvenv.cfg" if beside else "pyvenv.cfg")).write_text(f"home = {home}\nversion = 3.11.2\n")
    return python


def prefix(folder: Path, marker: Path) -> Path:
    """A Python prefix: bin, and lib/python3.11 with os.py and a sitecustomize.py that would
    leave `marker` if an interpreter took its standard library from here."""
    stdlib = folder / "lib" / "python3.11"
    stdlib.mkdir(parents=True)
    (folder / "bin").mkdir()
    (stdlib / "os.py").write_text("")
    (stdlib / "sitecustomize.py").write_text(f"open({str(marker)!r}, 'a').write('ran')\n")
    return folder


def owned_by_another(top: Path) -> None:
    for path in [top, *top.rglob("*")]:
        os.chown(path, 1001, 1001, follow_symlinks=False)


def commands(python, tmp_path):
    return {"reference-env": ["reference-env", "--python", str(python), "--output", str(tmp_path / "r.json")],
            "train-reference": ["train-reference", "--reference-python", str(python), "--log-dir",
                                str(tmp_path / "run")]}


def system_stdlib() -> Path:
    """The system Python's standard library folder (lib/python3.X beside its bin)."""
    version = Path(os.path.realpath(SYSTEM_PYTHON)).name  # python3.11
    return Path("/usr/lib") / version


@AS_ROOT
@WITH_SYSTEM_PYTHON
@pytest.mark.parametrize("command, option", [("reference-env", "--python"),
                                             ("train-reference", "--reference-python")])
def test_a_venv_whose_home_is_another_users_python_is_not_started(tmp_path, capsys, command, option):
    """The reviewer's case: a real venv made with --copies (its bin/python root's own
    program), its home another user's Python, whose standard library is whole (links to the
    system's) with a sitecustomize.py of theirs: started, it ran that file as root."""
    eve, marker = tmp_path / "eve", tmp_path / "pwned"
    stdlib = eve / "py" / "lib" / system_stdlib().name
    stdlib.mkdir(parents=True)
    (eve / "py" / "bin").mkdir()
    for entry in system_stdlib().iterdir():
        if entry.name not in ("sitecustomize.py", "usercustomize.py"):  # never written through a link
            (stdlib / entry.name).symlink_to(entry)
    with open(stdlib / "sitecustomize.py", "x") as fh:
        fh.write(f"open({str(marker)!r}, 'a').write('ran')\n")
    owned_by_another(eve)
    mine = tmp_path / "mine" / "v"
    subprocess.run([str(SYSTEM_PYTHON), "-m", "venv", "--copies", "--without-pip", str(mine)], check=True)
    settings = mine / "pyvenv.cfg"
    settings.write_text(settings.read_text().replace("home = /usr/bin", f"home = {eve / 'py' / 'bin'}"))
    python = mine / "bin" / "python"
    assert main(commands(python, tmp_path)[command]) == 2
    assert capsys.readouterr().err.strip() == (
        f"sacscale {command}: error: {option} '{python}' takes its Python from the home its venv's settings "
        f"'{settings}' name: '{eve / 'py' / 'bin'}' is inside {eve}, which belongs to uid 1001, another user; {TAIL}")
    assert not marker.exists()


@AS_ROOT
def test_planning_refuses_such_a_venv_as_reference_python(tmp_path):
    eve = prefix(tmp_path / "eve", tmp_path / "pwned")
    owned_by_another(eve)
    python = venv(tmp_path / "mine" / "v", str(eve / "bin"))
    assert refused(str(python)) == (
        f"reference.python: '{python}' takes its Python from the home its venv's settings "
        f"'{tmp_path / 'mine' / 'v' / 'pyvenv.cfg'}' name: '{eve / 'bin'}' is inside {eve}, which belongs to uid "
        f"1001, another user; {TAIL}")


@AS_ROOT
def test_an_interpreters_own_prefix_whose_lib_another_user_owns_is_refused(tmp_path, capsys):
    """No venv: a root-owned interpreter in root's folder takes its standard library from the
    prefix above it, found by searching up for lib/python3.X/os.py."""
    opt = prefix(tmp_path / "opt", tmp_path / "pwned")
    owned_by_another(opt / "lib")
    python = program(opt / "bin" / "python3")
    assert main(commands(python, tmp_path)["reference-env"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"sacscale reference-env: error: --python '{python}' looks for the standard library of its own Python from "
        f"'{opt / 'bin'}' up: '{opt / 'lib'}' belongs to uid 1001, another user; {TAIL}")
    assert not (tmp_path / "pwned").exists()


def test_settings_beside_the_interpreter_are_read_too(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)
    python = venv(tmp_path / "mine" / "v", str(shared / "py" / "bin"), beside=True)
    assert interpreter_problem(str(python)) == (
        f"'{python}' takes its Python from the home its venv's settings '{python.parent / 'pyvenv.cfg'}' name: "
        f"'{shared / 'py' / 'bin'}' is inside {shared}, which is writable by other users without the sticky bit "
        f"(mode 0777); {TAIL}")


def test_a_home_whose_standard_library_others_may_write_is_refused(tmp_path):
    base = prefix(tmp_path / "base", tmp_path / "pwned")
    (base / "lib" / "python3.11").chmod(0o777)
    python = venv(tmp_path / "mine" / "v", str(base / "bin"))
    settings = tmp_path / "mine" / "v" / "pyvenv.cfg"
    assert interpreter_problem(str(python)) == (
        f"'{python}' imports at start from the prefix '{base}' of the Python its venv's settings '{settings}' name "
        f"as home: '{base / 'lib' / 'python3.11'}' is writable by other users without the sticky bit (mode 0777); "
        f"{TAIL}")


@pytest.mark.parametrize("entry", ["lib-dynload", "site-packages"])
def test_the_folders_sys_path_holds_at_start_are_judged(tmp_path, entry):
    base = prefix(tmp_path / "base", tmp_path / "pwned")
    (base / "lib" / "python3.11" / entry).mkdir(mode=0o777)
    (base / "lib" / "python3.11" / entry).chmod(0o777)
    python = program(base / "bin" / "python3")
    assert interpreter_problem(str(python)) == (
        f"'{python}' imports at start from the prefix '{base}' of its own Python: "
        f"'{base / 'lib' / 'python3.11' / entry}' is writable by other users without the sticky bit (mode 0777); "
        f"{TAIL}")


def test_a_venvs_own_site_packages_others_may_write_is_refused(tmp_path):
    base = prefix(tmp_path / "base", tmp_path / "pwned")
    python = venv(tmp_path / "mine" / "v", str(base / "bin"))
    packages = tmp_path / "mine" / "v" / "lib" / "python3.11" / "site-packages"
    packages.mkdir(parents=True)
    packages.chmod(0o777)
    assert interpreter_problem(str(python)) == (
        f"'{python}' imports at start from its venv's packages (beside '{tmp_path / 'mine' / 'v' / 'pyvenv.cfg'}'): "
        f"'{packages}' is writable by other users without the sticky bit (mode 0777); {TAIL}")


def test_every_reading_of_home_is_judged(tmp_path):
    """A line break other than \\n (here \\v) splits lines for one reader and not another:
    every `home` either reading finds is judged, the first or not."""
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)
    python = venv(tmp_path / "mine" / "v", "/usr/bin")
    settings = tmp_path / "mine" / "v" / "pyvenv.cfg"
    settings.write_text(f"version = 3.11.2\vhome = {shared}/bin\nhome = /usr/bin\n")
    assert f"name: '{shared}/bin' is inside {shared}, which is writable" in interpreter_problem(str(python))


@pytest.mark.parametrize("settings, says", [
    ("fifo", "it is not a plain file"),
    ("large", "it is larger than 65536 bytes (a venv's settings are a few lines)"),
])
def test_settings_that_cannot_be_read_safely_are_refused(tmp_path, settings, says):
    python = program(tmp_path / "mine" / "v" / "bin" / "python")
    path = tmp_path / "mine" / "v" / "pyvenv.cfg"
    if settings == "fifo":
        os.mkfifo(path)  # opened without waiting: no writer ever comes
    else:
        path.write_text("home = /usr/bin\n" + "#" * 70000)
    assert interpreter_problem(str(python)) == (
        f"'{python}' reads its venv's settings from '{path}': {says}, so what the interpreter loads cannot be "
        "judged: name an interpreter of your own")


def test_a_relative_home_is_refused(tmp_path):
    python = venv(tmp_path / "mine" / "v", "py/bin")
    assert interpreter_problem(str(python)) == (
        f"'{python}' takes its Python from the home its venv's settings '{tmp_path / 'mine' / 'v' / 'pyvenv.cfg'}' "
        "name: 'py/bin' is not an absolute path (where it leads depends on the folder Python starts in): name an "
        "interpreter of your own")


@WITH_SYSTEM_PYTHON
@pytest.mark.parametrize("how", ["--symlinks", "--copies"])
def test_the_system_python_and_ones_own_venvs_of_it_pass(tmp_path, how):
    subprocess.run([str(SYSTEM_PYTHON), "-m", "venv", how, "--without-pip", str(tmp_path / "v")], check=True)
    assert interpreter_problem(str(SYSTEM_PYTHON)) is None
    assert interpreter_problem(str(tmp_path / "v" / "bin" / "python")) is None
    assert "home = /usr/bin" in (tmp_path / "v" / "pyvenv.cfg").read_text()


def test_the_interpreter_running_these_tests_passes():
    assert interpreter_problem(sys.executable) is None
