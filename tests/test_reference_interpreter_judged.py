"""`sacscale reference-env --python` and `sacscale train-reference --reference-python` judge
the interpreter before starting it, as planning judges a run's code paths. Before: either
started whatever it was given, so `reference-env --python /home/eve/evil/python` run as
root ran eve's program as root."""

import os

import pytest

from sacscale.cli import main

AS_ROOT = pytest.mark.skipif(os.geteuid() != 0, reason="another user's folder is made by root (chown)")
TAIL = "it is started as this user, so that user's program would run as this user: name an interpreter of your own"


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


@pytest.mark.parametrize("line", ["#!{}", "#!{} -u", "#!/usr/bin/env {}"])
def test_a_script_of_ones_own_starting_a_program_others_may_replace_is_refused(tmp_path, capsys, monkeypatch,
                                                                                line):
    """The kernel starts the program a script's `#!` line names: one's own script that names
    a program in a folder others may write starts their program."""
    open_folder = tmp_path / "open"
    open_folder.mkdir()
    open_folder.chmod(0o777)
    marker = tmp_path / "started"
    theirs = planted(open_folder / "bin", marker)
    monkeypatch.setenv("PATH", f"{theirs.parent}:{os.environ['PATH']}")
    mine = tmp_path / "mine" / "python"
    mine.parent.mkdir()
    mine.write_text(line.format(theirs if "env" not in line else theirs.name) + "\n")
    mine.chmod(0o755)
    assert main(["reference-env", "--python", str(mine), "--output", str(tmp_path / "r.json")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"sacscale reference-env: error: --python '{theirs}' (the program '{mine}' starts by its "
                          f"#! line) is inside {open_folder}, which is writable by other users"), err
    assert not marker.exists()


@pytest.mark.parametrize("line", ["#!/usr/bin/env -S {} -u", "#!/usr/bin/env -S{}", "#!/usr/bin/env -i A=1 {}",
                                  "#!/usr/bin/env -u HOME {}"])
def test_env_options_before_the_program_are_read(tmp_path, capsys, line):
    """`env -S /x/python` starts /x/python: the option was read as the program's name."""
    open_folder = tmp_path / "open"
    open_folder.mkdir()
    open_folder.chmod(0o777)
    marker = tmp_path / "started"
    theirs = planted(open_folder / "bin", marker)
    mine = tmp_path / "mine" / "python"
    mine.parent.mkdir()
    mine.write_text(line.format(theirs) + "\n")
    mine.chmod(0o755)
    assert main(["reference-env", "--python", str(mine), "--output", str(tmp_path / "r.json")]) == 2
    assert f"--python '{theirs}' (the program '{mine}' starts by its #! line)" in capsys.readouterr().err
    assert not marker.exists()


def test_a_chain_of_scripts_as_long_as_the_kernel_follows_is_judged_to_its_end(tmp_path, capsys):
    open_folder = tmp_path / "open"
    open_folder.mkdir()
    open_folder.chmod(0o777)
    marker = tmp_path / "started"
    program = planted(open_folder / "bin", marker)
    mine = tmp_path / "mine"
    mine.mkdir()
    for level in range(5, 1, -1):  # s2 -> s3 -> s4 -> s5 -> their program
        script = mine / f"s{level}"
        script.write_text(f"#!{program}\n")
        script.chmod(0o755)
        program = script
    assert main(["reference-env", "--python", str(program), "--output", str(tmp_path / "r.json")]) == 2
    assert f"is inside {open_folder}, which is writable by other users" in capsys.readouterr().err
    assert not marker.exists()
