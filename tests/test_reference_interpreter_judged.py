"""`sacscale reference-env --python` and `sacscale train-reference --reference-python` judge
the interpreter before starting it, as planning judges a run's code paths. Before: either
started whatever it was given, so `reference-env --python /home/eve/evil/python` run as
root ran eve's program as root."""

import os

import pytest

from sacscale.cli import main

AS_ROOT = pytest.mark.skipif(os.geteuid() != 0, reason="another user's folder is made by root (chown)")
TAIL = "it is started as this user, so another user's code could run as this user: name an interpreter of your own"


def planted(folder, marker):
    """A program in `folder` that leaves `marker` where it is started."""
    folder.mkdir(parents=True, exist_ok=True)
    python = folder / "python"
    python.write_text(f"#!/bin/sh\nid -u >> {marker}\n")
    python.chmod(0o755)
    return python


def commands(python, tmp_path):
    return {"reference-env": ["reference-env", "--python", str(python), "--output", str(tmp_path / "r.json")],
            "train-reference": ["train-reference", "--reference-python", str(python), "--log-dir",
                                str(tmp_path / "run")]}


@pytest.mark.parametrize("command, option", [("reference-env", "--python"),
                                             ("train-reference", "--reference-python")])
def test_an_interpreter_others_may_replace_is_refused_before_it_starts(tmp_path, capsys, command, option):
    open_folder = tmp_path / "open"
    open_folder.mkdir()
    open_folder.chmod(0o777)
    marker = tmp_path / "started"
    python = planted(open_folder / "bin", marker)
    assert main(commands(python, tmp_path)[command]) == 2
    assert capsys.readouterr().err.strip() == (
        f"sacscale {command}: error: {option} '{python}' is inside {open_folder}, which is writable by other users "
        f"without the sticky bit (mode 0777); {TAIL}")
    assert not marker.exists()


def test_a_bare_name_is_judged_as_the_file_path_finds(tmp_path, capsys, monkeypatch):
    open_folder = tmp_path / "open"
    open_folder.mkdir()
    open_folder.chmod(0o777)
    (open_folder / "python3x").write_text("#!/bin/sh\n")
    (open_folder / "python3x").chmod(0o755)
    monkeypatch.setenv("PATH", f"{open_folder}:{os.environ['PATH']}")
    assert main(["reference-env", "--python", "python3x", "--output", str(tmp_path / "r.json")]) == 2
    assert capsys.readouterr().err.strip().startswith(
        f"sacscale reference-env: error: --python '{open_folder / 'python3x'}' is inside {open_folder}, which is "
        "writable by other users")


def test_create_into_a_folder_others_may_write_is_refused(tmp_path, capsys):
    open_folder = tmp_path / "open"
    open_folder.mkdir()
    open_folder.chmod(0o777)
    python = open_folder / "venv" / "bin" / "python"  # not made yet: another user could make it first
    assert main(["reference-env", "--python", str(python), "--create", "--output", str(tmp_path / "r.json")]) == 2
    assert f"--python '{python}' is inside {open_folder}, which is writable by other users" in capsys.readouterr().err
    assert not (open_folder / "venv").exists()


@AS_ROOT
@pytest.mark.parametrize("command, option", [("reference-env", "--python"),
                                             ("train-reference", "--reference-python")])
def test_another_users_program_is_not_started(tmp_path, capsys, command, option):
    eve = tmp_path / "eve"
    marker = tmp_path / "pwned"
    python = planted(eve / "evil", marker)
    for path in (eve, eve / "evil", python):
        os.chown(path, 1001, 1001)
    assert main(commands(python, tmp_path)[command]) == 2
    assert capsys.readouterr().err.strip() == (
        f"sacscale {command}: error: {option} '{python}' is inside {eve}, which belongs to uid 1001, another "
        f"user; {TAIL}")
    assert not marker.exists()


# what a script's #! line starts is the kernel's, env's and the shell's reading (env -S, its
# --split-string, bundled options, its own PATH, -C, quoting, a file handed to sh): every
# form here once started another user's program as root; a script is refused whoever owns it
@pytest.mark.parametrize("line", [
    "#!{p}", "#!{p} -u", "#!/usr/bin/env {name}", "#!/usr/bin/env -S {p} -u", "#!/usr/bin/env -S{p}",
    "#!/usr/bin/env --split-string={p}", "#!/usr/bin/env -vS{p}", "#!/usr/bin/env -S PATH={d} {name}",
    "#!/usr/bin/env -S \"{p}\"", "#!/usr/bin/env -S -C {d} ./{name}", "#!/bin/sh {p}", "#!/bin/sh\x00{p}",
])
def test_a_script_is_refused_whatever_its_line_starts(tmp_path, capsys, monkeypatch, line):
    open_folder = tmp_path / "open"
    open_folder.mkdir()
    open_folder.chmod(0o777)
    marker = tmp_path / "started"
    theirs = planted(open_folder / "bin", marker)
    monkeypatch.setenv("PATH", f"{theirs.parent}:{os.environ['PATH']}")
    mine = tmp_path / "mine" / "python"
    mine.parent.mkdir()
    mine.write_text(line.format(p=theirs, d=theirs.parent, name=theirs.name) + "\n")
    mine.chmod(0o755)
    assert main(["reference-env", "--python", str(mine), "--output", str(tmp_path / "r.json")]) == 2
    assert capsys.readouterr().err.strip() == (
        f"sacscale reference-env: error: --python '{mine}' {SCRIPT}")
    assert not marker.exists()


# a script of one's own names no other user: the refusal says why a script is not taken
SCRIPT = ("is a script (a #! line), not a Python interpreter, and the program its line starts is not judged: give the "
          "interpreter itself (e.g. <venv>/bin/python)")


def test_ones_own_script_is_refused_naming_no_other_user(tmp_path, capsys):
    mine = tmp_path / "s"
    mine.write_text("#!/usr/bin/python3\n")
    mine.chmod(0o755)
    log_dir = tmp_path / "run"
    assert main(["train-reference", "--reference-python", str(mine), "--log-dir", str(log_dir)]) == 2
    assert capsys.readouterr().err.strip() == f"sacscale train-reference: error: --reference-python '{mine}' {SCRIPT}"
    assert not log_dir.exists()


@AS_ROOT
def test_a_link_into_another_users_folder_says_where_it_leads(tmp_path, capsys):
    """A venv made with links (bin/python -> python3 -> their python): the given path is one's
    own; the refusal names where it leads, inside their folder."""
    eve = tmp_path / "eve"
    marker = tmp_path / "pwned"
    theirs = planted(eve / "py" / "bin", marker)
    for path in (eve, eve / "py", eve / "py" / "bin", theirs):
        os.chown(path, 1001, 1001)
    python = tmp_path / "mine" / "bin" / "python"
    python.parent.mkdir(parents=True)
    (python.parent / "python3").symlink_to(theirs)
    python.symlink_to("python3")
    assert main(commands(python, tmp_path)["reference-env"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"sacscale reference-env: error: --python '{python}' leads to {theirs}, inside {eve}, which belongs to uid "
        f"1001, another user; {TAIL}")
    assert not marker.exists()
