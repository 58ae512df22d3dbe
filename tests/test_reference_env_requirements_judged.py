"""`reference-env --create --requirements FILE` judges the file and each local thing it names
before pip starts: pip installs them as this user and runs a local project's build code.
Before: `--requirements /home/eve/req.txt` (hers), naming `/home/eve/evilpkg`, had pip run
her setup.py as root. Now a file, nested file or local project another user owns or may
change is refused, exit 2, one line naming the file, the line and the problem."""

import os

import pytest

from sacscale.commands import reference_env
from tests.reference_env_requirements_stand_in import THING_TAIL, created, project

AS_ROOT = pytest.mark.skipif(os.geteuid() != 0, reason="another user's file is made by root (chown)")
FILE_TAIL = ("pip installs what it names as this user, so that user's code could run as this user: name a "
             "requirements file of your own")


@AS_ROOT
def test_another_users_requirements_file_is_refused(tmp_path, capsys, pip_calls):
    eve = tmp_path / "eve"
    eve.mkdir()
    req = eve / "req.txt"
    req.write_text(f"{project(eve / 'evilpkg')}\n")
    os.chown(req, 1001, 1001)
    assert created(tmp_path, req) == 2
    assert capsys.readouterr().err.strip() == (
        f"sacscale reference-env: error: --requirements {req}: '{req}' belongs to uid 1001, another user; "
        f"{FILE_TAIL}")
    assert pip_calls == []


def test_a_requirements_file_others_may_write_is_refused(tmp_path, capsys, pip_calls):
    req = tmp_path / "req.txt"
    req.write_text("numpy\n")
    req.chmod(0o666)
    assert created(tmp_path, req) == 2
    assert capsys.readouterr().err.strip() == (
        f"sacscale reference-env: error: --requirements {req}: '{req}' is writable by other users (mode 0666); "
        f"{FILE_TAIL}")
    assert pip_calls == []


@AS_ROOT
@pytest.mark.parametrize("line", ["{p}", "-e {p}", "--editable={p}", "file://{p}", "evil @ file://{p}",
                                  "git+file://{p}@v1#egg=evil", "./{rel}", "./{rel}[x] ; python_version>'3'",
                                  "-f {p}", "--find-links {p}", "# a note \\\n{p}", "-e \\\n{p}"])
def test_another_users_project_named_by_the_file_is_refused(tmp_path, capsys, pip_calls, monkeypatch, line):
    evilpkg = project(tmp_path / "eve" / "evilpkg", uid=1001)
    monkeypatch.chdir(tmp_path)
    req = tmp_path / "req.txt"
    req.write_text("numpy==2.0  # ours\n" + line.format(p=evilpkg, rel="eve/evilpkg") + "\n")
    # pip ends a line at a comment even where it ends in a backslash; one without continues
    number = 3 if line.startswith("#") else 2
    assert created(tmp_path, req) == 2
    assert capsys.readouterr().err.strip() == (
        f"sacscale reference-env: error: --requirements {req}: '{req}' line {number}: '{evilpkg}' belongs to "
        f"uid 1001, another user; {THING_TAIL}")
    assert pip_calls == []


@AS_ROOT
def test_another_users_file_inside_ones_own_project_is_refused(tmp_path, capsys, pip_calls):
    mine = project(tmp_path / "mine")
    os.chown(mine / "setup.py", 1001, 1001)
    req = tmp_path / "req.txt"
    req.write_text(f"-e {mine}\n")
    assert created(tmp_path, req) == 2
    assert capsys.readouterr().err.strip() == (
        f"sacscale reference-env: error: --requirements {req}: '{req}' line 1: '{mine}' holds "
        f"'{mine / 'setup.py'}', which belongs to uid 1001, another user; {THING_TAIL}")


@AS_ROOT
@pytest.mark.parametrize("option", ["-r ", "-c ", "--requirement=", "--constraint ", "-r"])
def test_a_nested_file_of_another_user_is_refused_naming_the_line(tmp_path, capsys, pip_calls, option):
    (tmp_path / "sub").mkdir()
    nested = tmp_path / "sub" / "more.txt"
    nested.write_text("numpy\n")
    os.chown(nested, 1001, 1001)
    req = tmp_path / "req.txt"
    req.write_text(f"\n\n{option}sub/more.txt\n")  # relative to the file naming it
    assert created(tmp_path, req) == 2
    assert capsys.readouterr().err.strip() == (
        f"sacscale reference-env: error: --requirements {req}: '{req}' line 3: '{nested}' belongs to uid 1001, "
        f"another user; {FILE_TAIL}")


def test_a_local_path_others_could_make_first_is_refused(tmp_path, capsys, pip_calls):
    open_folder = tmp_path / "open"
    open_folder.mkdir()
    open_folder.chmod(0o777)
    req = tmp_path / "req.txt"
    req.write_text(f"-e {open_folder / 'pkg'}\n")
    assert created(tmp_path, req) == 2
    assert capsys.readouterr().err.strip() == (
        f"sacscale reference-env: error: --requirements {req}: '{req}' line 1: '{open_folder / 'pkg'}' is inside "
        f"{open_folder}, which is writable by other users without the sticky bit (mode 0777); {THING_TAIL}")


def test_ones_own_file_and_projects_and_remote_names_go_to_pip(tmp_path, capsys, pip_calls, monkeypatch):
    mine = project(tmp_path / "mine")
    (tmp_path / "more.txt").write_text(f"-e {mine}\n-r req.txt\n")  # naming the first file again: read once
    req = tmp_path / "req.txt"
    req.write_text("unilab[mujoco]==1.5.2\n-r more.txt\n-i https://example.org/simple\n"
                   "x @ https://example.org/x.whl\ngit+https://example.org/r.git#egg=r\n./mine\n")
    monkeypatch.chdir(tmp_path)
    assert created(tmp_path, req) == 1
    assert capsys.readouterr().err.strip() == "sacscale reference-env: error: pip stood in for"
    assert pip_calls == [str(req)]


def test_the_repository_requirements_file_goes_to_pip(tmp_path, capsys, pip_calls):
    assert created(tmp_path, reference_env.REQUIREMENTS) == 1
    assert pip_calls == [reference_env.REQUIREMENTS]
