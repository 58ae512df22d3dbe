"""The path files (`*.pth`) in the site-packages folders a reference interpreter loads at
start are judged too: site.py reads each at start, adds the folder each line names to
sys.path (and `sitecustomize` is imported from there) and runs each `import` line. Before:
only the folders were judged, so root's own venv whose site-packages held `extra.pth` naming
/home/eve/pylib was started by reference-env and ran eve's sitecustomize.py as root, and a
.pth file of eve's in root's site-packages ran its `import` line as root. Nothing is started
to find out."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sacscale.cli import main
from sacscale.pipeline import interpreter_check
from sacscale.pipeline.interpreter_check import interpreter_problem
from tests.test_reference_interpreter_loads_judged import AS_ROOT, TAIL, commands, owned_by_another, prefix, venv
from tests.workflow.test_config_reference_python import refused

OWN = "name an interpreter of your own"
# the lines setuptools writes: its distutils shim, and an editable install naming its source folder
DISTUTILS_PRECEDENCE = ("import os; var = 'SETUPTOOLS_USE_DISTUTILS'; enabled = os.environ.get(var, 'local') == "
                        "'local'; enabled and __import__('_distutils_hack').add_shim(); \n")


def real_venv(folder: Path) -> tuple[Path, Path]:
    """A venv made by the Python running these tests: (its bin/python, its site-packages)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    packages = next((folder / "lib").glob("python3*/site-packages"))
    return folder / "bin" / "python", packages


def fake_venv(tmp_path: Path) -> tuple[Path, Path]:
    """A venv's layout (never started): bin/python, its settings, and its site-packages."""
    base = prefix(tmp_path / "base", tmp_path / "pwned")
    python = venv(tmp_path / "mine" / "v", str(base / "bin"))
    packages = tmp_path / "mine" / "v" / "lib" / "python3.11" / "site-packages"
    packages.mkdir(parents=True)
    return python, packages


def shared_folder(path: Path) -> Path:
    path.mkdir(parents=True)
    path.chmod(0o777)
    return path


def another_users_folder(tmp_path: Path, marker: Path) -> Path:
    """eve's folder with a sitecustomize.py that would leave `marker` if a started
    interpreter imported it."""
    eve = tmp_path / "eve"
    (eve / "pylib").mkdir(parents=True)
    (eve / "pylib" / "sitecustomize.py").write_text(f"open({str(marker)!r}, 'a').write('ran')\n")
    owned_by_another(eve)
    return eve


@AS_ROOT
@pytest.mark.parametrize("command, option", [("reference-env", "--python"),
                                             ("train-reference", "--reference-python")])
def test_a_path_file_naming_another_users_folder_is_refused(tmp_path, capsys, command, option):
    """The reviewer's case: root's own venv, its site-packages/extra.pth naming eve's folder,
    where her sitecustomize.py is: started, it ran that file as root."""
    marker = tmp_path / "pwned"
    eve = another_users_folder(tmp_path, marker)
    python, packages = real_venv(tmp_path / "rv")
    (packages / "extra.pth").write_text(f"{eve / 'pylib'}\n")
    assert main(commands(python, tmp_path)[command]) == 2
    assert capsys.readouterr().err.strip() == (
        f"sacscale {command}: error: {option} '{python}' adds to sys.path at start the folders "
        f"'{packages / 'extra.pth'}' names: '{eve / 'pylib'}' is inside {eve}, which belongs to uid 1001, another "
        f"user; {TAIL}")
    assert not marker.exists()


@AS_ROOT
def test_another_users_path_file_in_ones_own_site_packages_is_refused(tmp_path, capsys):
    """A .pth file of eve's (as `tar x` as root leaves a user's files) in root's own folder:
    its `import` line is code run at every start."""
    marker = tmp_path / "pwned"
    python, packages = real_venv(tmp_path / "rv")
    path_file = packages / "x.pth"
    path_file.write_text(f"import os; open({str(marker)!r}, 'a').write('ran')\n")
    os.chown(path_file, 1001, 1001)
    assert main(commands(python, tmp_path)["reference-env"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"sacscale reference-env: error: --python '{python}' runs at start the path files (.pth) in '{packages}': "
        f"'{path_file}' belongs to uid 1001, another user; {TAIL}")
    assert not marker.exists()


@AS_ROOT
def test_another_users_link_as_a_path_file_is_not_followed(tmp_path):
    python, packages = fake_venv(tmp_path)
    (tmp_path / "mine" / "lines").write_text("")
    (packages / "x.pth").symlink_to(tmp_path / "mine" / "lines")
    os.chown(packages / "x.pth", 1001, 1001, follow_symlinks=False)
    assert interpreter_problem(str(python)) == (
        f"'{python}' runs at start the path files (.pth) in '{packages}': '{packages / 'x.pth'}' is reached "
        f"through {packages / 'x.pth'}, another user's symbolic link (uid 1001); {TAIL}")


def test_planning_refuses_a_reference_python_whose_path_file_names_a_shared_folder(tmp_path):
    shared = shared_folder(tmp_path / "shared")
    python, packages = fake_venv(tmp_path)
    (packages / "extra.pth").write_text(f"# a comment\n\n{shared}\n")
    assert refused(str(python)) == (
        f"reference.python: '{python}' adds to sys.path at start the folders '{packages / 'extra.pth'}' names: "
        f"'{shared}' is writable by other users without the sticky bit (mode 0777); {TAIL}")


@pytest.mark.parametrize("lines", ["../../../../../shared/lib\n", "\ufeff../../../../../shared/lib\n",
                                   "/usr/lib\x0b../../../../../shared/lib\n"])
def test_relative_lines_and_every_reading_of_the_lines_are_judged(tmp_path, lines):
    """A relative line is relative to the site-packages folder; a byte-order mark and a line
    break other than \\n are read one way by one Python version and another by the next."""
    shared = shared_folder(tmp_path / "shared")
    python, packages = fake_venv(tmp_path)
    (packages / "rel.pth").write_text(lines, encoding="utf-8")
    assert interpreter_problem(str(python)) == (
        f"'{python}' adds to sys.path at start the folders '{packages / 'rel.pth'}' names: '{shared / 'lib'}' is "
        f"inside {shared}, which is writable by other users without the sticky bit (mode 0777); {TAIL}")


def test_the_base_pythons_path_files_are_judged(tmp_path):
    """The site-packages of the prefix an interpreter takes its standard library from."""
    shared = shared_folder(tmp_path / "shared")
    base = prefix(tmp_path / "base", tmp_path / "pwned")
    packages = base / "lib" / "python3.11" / "site-packages"
    packages.mkdir()
    (packages / "a.pth").write_text(f"{shared}\n")
    python = venv(tmp_path / "mine" / "v", str(base / "bin"))
    assert interpreter_problem(str(python)) == (
        f"'{python}' adds to sys.path at start the folders '{packages / 'a.pth'}' names: '{shared}' is writable by "
        f"other users without the sticky bit (mode 0777); {TAIL}")


@pytest.mark.parametrize("path_file, says", [
    ("fifo", "is not a plain file"),
    ("folder", "is not a plain file"),
    ("large", "is larger than 65536 bytes (a path file is a few lines)"),
])
def test_path_files_that_cannot_be_read_safely_are_refused(tmp_path, path_file, says):
    python, packages = fake_venv(tmp_path)
    path = packages / "x.pth"
    if path_file == "fifo":
        os.mkfifo(path)  # opened without waiting: no writer ever comes
    elif path_file == "folder":
        path.mkdir()
    else:
        path.write_text("#" * 70000 + "\n")
    assert interpreter_problem(str(python)) == (
        f"'{python}' runs at start the path files (.pth) in '{packages}': '{path}' {says}, so what the interpreter "
        f"loads cannot be judged: {OWN}")


def test_too_many_path_files_are_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(interpreter_check, "PATH_FILES_MAX", 2)
    python, packages = fake_venv(tmp_path)
    for name in ("a", "b", "c"):
        (packages / f"{name}.pth").write_text("")
    assert interpreter_problem(str(python)) == (
        f"'{python}' runs at start the path files (.pth) in '{packages}': it holds 3 of them, more than 2, so what "
        f"the interpreter loads cannot be judged: {OWN}")


def test_ordinary_path_files_of_ones_own_pass(tmp_path):
    """setuptools' distutils shim (an `import` line), an editable install naming a source
    folder of one's own, a relative line, a comment, a folder not there (site.py skips it)
    and a hidden .pth of anyone's (site.py skips it) pass."""
    python, packages = real_venv(tmp_path / "rv")
    (tmp_path / "src").mkdir()
    (packages / "distutils-precedence.pth").write_text(DISTUTILS_PRECEDENCE)
    (packages / "__editable__.mypkg-0.1.0.pth").write_text(f"{tmp_path / 'src'}\n")
    (packages / "rel.pth").write_text("# vendored\nvendored\n../../../../src\n")
    (packages / ".hidden.pth").write_text("/anywhere\n")
    if os.geteuid() == 0:
        os.chown(packages / ".hidden.pth", 1001, 1001)
    assert interpreter_problem(str(python)) is None


def test_the_projects_own_venv_passes():
    """The venv running these tests (an editable install's .pth among its files, where it
    is installed so) passes."""
    assert interpreter_problem(sys.executable) is None
    assert interpreter_problem(os.path.join(sys.prefix, "bin", "python")) is None
