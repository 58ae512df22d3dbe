"""`train-reference` on an interpreter that `reference-env --create` is still making. Before:
it did not look at the creation lock, started the half-made interpreter and failed with a
wrong cause (`cannot import the reference`). Now it is refused at once, one line naming the
holder, exit 2, nothing made: as `reference-env` (record) refuses it."""

import os

from sacscale.cli import main
from sacscale.commands._output_lock import holding_outputs


def test_train_reference_refuses_an_environment_being_created(tmp_path, capsys):
    venv = tmp_path / "rv"
    python = venv / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_bytes(b"\x7fELF")  # half made: the interpreter is there, its packages not yet
    log_dir = tmp_path / "tr1"
    with holding_outputs(("--python", venv)):  # as reference-env --create holds it
        code = main(["train-reference", "--devices", "0", "--num-envs", "4", "--iterations", "1", "--log-dir",
                     str(log_dir), "--reference-python", str(python)])
    assert code == 2
    assert capsys.readouterr().err.strip() == (
        f"sacscale train-reference: error: --reference-python {python}: another sacscale command is creating this "
        f"environment (pid {os.getpid()} holds {tmp_path / '.rv.lock'}); nothing was started: run this one once it "
        "has finished")
    assert not log_dir.exists()


def test_the_same_environment_named_with_dotdot_is_refused_too(tmp_path, capsys):
    """`rv/bin/../bin/python` is rv's interpreter: before, its lock was looked for as
    `rv/bin/....lock`, the creation's `.rv.lock` was missed and the half-made interpreter started."""
    venv = tmp_path / "rv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_bytes(b"\x7fELF")
    python = venv / "bin" / ".." / "bin" / "python"
    log_dir = tmp_path / "tr1"
    with holding_outputs(("--python", venv)):
        code = main(["train-reference", "--devices", "0", "--num-envs", "4", "--iterations", "1", "--log-dir",
                     str(log_dir), "--reference-python", str(python)])
    assert code == 2
    assert capsys.readouterr().err.strip() == (
        f"sacscale train-reference: error: --reference-python {python}: another sacscale command is creating this "
        f"environment (pid {os.getpid()} holds {tmp_path / '.rv.lock'}); nothing was started: run this one once it "
        "has finished")
    assert not log_dir.exists()
