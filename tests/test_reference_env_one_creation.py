"""`reference-env --create` holds its environment folder's lock (`.<venv>.lock` beside it)
while it makes the environment and records it. Before: two creations into one new
interpreter path both went on; the second found the interpreter already there (half made),
skipped creating and failed with a wrong cause (`cannot import the reference`). Now a second
creation is refused at once, and so is a record of the environment taken while it is being
made, one line naming the holder, exit 2. The first is held inside its (stood-in) `create`
while the second runs: no timing decides the order."""

import os

from sacscale.cli import main
from sacscale.commands import reference_env


def argv(python, output):
    return ["reference-env", "--create", "--python", str(python), "--output", str(output)]


def test_a_second_creation_and_a_record_while_it_is_made_are_refused(tmp_path, capsys, monkeypatch):
    venv = tmp_path / "venv"
    python = venv / "bin" / "python"
    second = {}

    def first_create(interpreter, requirements):
        second["create"] = main(argv(python, tmp_path / "r2.json"))
        second["create_err"] = capsys.readouterr().err.strip()
        interpreter.parent.mkdir(parents=True)
        interpreter.write_bytes(b"\x7fELF")  # half made: the interpreter is there, its packages not yet
        second["record"] = main(["reference-env", "--python", str(python), "--output", str(tmp_path / "r3.json")])
        second["record_err"] = capsys.readouterr().err.strip()
        raise RuntimeError("pip stood in for")

    monkeypatch.setattr(reference_env, "create", first_create)
    assert main(argv(python, tmp_path / "r1.json")) == 1
    lock = tmp_path / ".venv.lock"
    assert second["create"] == 2
    assert second["create_err"] == (
        f"sacscale reference-env: error: --python {venv}: another sacscale command is writing this output (pid "
        f"{os.getpid()} holds {lock}); nothing was written: run this one once it has finished, or write it elsewhere")
    assert second["record"] == 2
    assert second["record_err"] == (
        f"sacscale reference-env: error: --python {python}: another sacscale command is creating this environment "
        f"(pid {os.getpid()} holds {lock}); nothing was read: run this one once it has finished")
    assert not (tmp_path / "r2.json").exists() and not (tmp_path / "r3.json").exists()
    assert not lock.exists()  # released with the first


def test_the_same_environment_named_with_dotdot_is_one_creation(tmp_path, capsys, monkeypatch):
    """`venv/bin/../bin/python` names the environment the first creation makes: before, it took
    a lock of its own (`venv/bin/....lock`) and both made and pip-installed into one folder."""
    venv = tmp_path / "venv"
    python = venv / "bin" / "python"
    other = venv / "bin" / ".." / "bin" / "python"
    second = {}

    def first_create(interpreter, requirements):
        second["create"] = main(argv(other, tmp_path / "r2.json"))
        second["create_err"] = capsys.readouterr().err.strip()
        interpreter.parent.mkdir(parents=True)
        interpreter.write_bytes(b"\x7fELF")
        second["record"] = main(["reference-env", "--python", str(other), "--output", str(tmp_path / "r3.json")])
        second["record_err"] = capsys.readouterr().err.strip()
        raise RuntimeError("pip stood in for")

    monkeypatch.setattr(reference_env, "create", first_create)
    assert main(argv(python, tmp_path / "r1.json")) == 1
    lock = tmp_path / ".venv.lock"
    assert second["create"] == 2
    assert second["create_err"] == (
        f"sacscale reference-env: error: --python {venv}: another sacscale command is writing this output (pid "
        f"{os.getpid()} holds {lock}); nothing was written: run this one once it has finished, or write it elsewhere")
    assert second["record"] == 2
    assert second["record_err"] == (
        f"sacscale reference-env: error: --python {other}: another sacscale command is creating this environment "
        f"(pid {os.getpid()} holds {lock}); nothing was read: run this one once it has finished")
    assert not venv.exists()  # taken back by the first, the only one that made it
    assert not lock.exists() and not (venv / "bin" / "....lock").exists()
