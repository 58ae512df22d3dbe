"""`reference-env --create` that fails after making the environment. Before: the half-made
venv (its interpreter, some packages) was left, and a later run took it as made (it only
recorded or refused it, never finished it). Now what the creation made is taken back: the
folder it made is removed (a folder that was there keeps all but the interpreter), so a
later --create makes it again. pip and venv are stood in for: no index is needed."""

import subprocess

import pytest

from sacscale.cli import main
from sacscale.commands import reference_env
from sacscale.trainers import unilab

TAKEN_BACK = "(the unfinished environment was taken back: a later --create makes it again)"


@pytest.fixture
def failing_pip(monkeypatch):
    """venv makes DIR/bin/python; pip's install of the requirements exits 1."""
    real_run = subprocess.run

    def fake_run(cmd, *args, **kw):
        if cmd[1:3] == ["-m", "venv"]:
            python = reference_env.Path(cmd[3]) / "bin" / "python"
            python.parent.mkdir(parents=True)
            python.write_bytes(b"\x7fELF")
            return subprocess.CompletedProcess(cmd, 0)
        if cmd[1:3] == ["-m", "pip"]:
            return subprocess.CompletedProcess(cmd, 1 if "-r" in cmd else 0)
        return real_run(cmd, *args, **kw)
    monkeypatch.setattr(reference_env.subprocess, "run", fake_run)


def created(tmp_path, venv):
    req = tmp_path / "req.txt"
    req.write_text("numpy\n")
    return main(["reference-env", "--create", "--python", str(venv / "bin" / "python"), "--requirements", str(req),
                 "--output", str(tmp_path / "r.json")])


def test_a_failed_pip_takes_back_the_environment_it_made(tmp_path, capsys, failing_pip):
    venv = tmp_path / "venv"
    assert created(tmp_path, venv) == 1
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith(f"sacscale reference-env: error: `{venv / 'bin' / 'python'} -m pip install --quiet torch==")
    assert err.endswith(f"-r {tmp_path / 'req.txt'}` exited 1 {TAKEN_BACK}")
    assert not venv.exists() and not (tmp_path / "r.json").exists()


def test_a_folder_that_was_there_keeps_all_but_the_interpreter(tmp_path, capsys, failing_pip):
    venv = tmp_path / "venv"
    venv.mkdir()
    (venv / "notes.txt").write_text("mine\n")
    assert created(tmp_path, venv) == 1
    assert capsys.readouterr().err.strip().endswith(TAKEN_BACK)
    assert (venv / "notes.txt").read_text() == "mine\n" and not (venv / "bin" / "python").exists()


def test_an_environment_that_cannot_import_the_reference_is_taken_back(tmp_path, capsys, failing_pip, monkeypatch):
    monkeypatch.setattr(reference_env.subprocess, "run", lambda cmd, *a, **kw: (
        (tmp_path / "venv" / "bin").mkdir(parents=True, exist_ok=True), (tmp_path / "venv" / "bin" / "python").touch(),
        subprocess.CompletedProcess(cmd, 0))[-1])

    def no_reference(python):
        raise unilab.UnilabError(f"{python} cannot import the reference: No module named 'unilab'")
    monkeypatch.setattr(unilab, "package_info", no_reference)
    venv = tmp_path / "venv"
    assert created(tmp_path, venv) == 1
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"sacscale reference-env: error: {venv / 'bin' / 'python'} cannot import the reference: No module named "
        f"'unilab' {TAKEN_BACK}")
    assert not venv.exists()


def test_an_interpreter_without_the_reference_is_named_by_its_exception_not_its_traceback(tmp_path, capsys):
    """A --python that cannot import unilab: the child's traceback was carried into the line
    (escaped "Traceback (most recent call last):\\n  File ..."); its last line says it all."""
    import sys

    code = main(["reference-env", "--python", sys.executable, "--output", str(tmp_path / "r.json")])
    err = capsys.readouterr().err
    assert code == 1 and len(err.strip().splitlines()) == 1, err
    assert err.strip() == (f"sacscale reference-env: error: {sys.executable} cannot import the reference: "
                           "ModuleNotFoundError: No module named 'unilab'"), err
    assert not (tmp_path / "r.json").exists()
