"""Child interpreters a command starts, run from a folder another user can write. Before:
`python -m venv`, `python -m pip` and the reference's `python -c` probes put the working
folder first on their import path, so that user's `venv.py`, `pip.py` or `json.py` there
ran as this user (root, root's), before any check of the requirements or the interpreter
mattered. Now the CLI sets PYTHONSAFEPATH for every child it starts (the reference's probes run
isolated; planning's trial interpreters, started by Snakemake, with -P): the planted modules
stay unread, the children do their own work."""

import os
import subprocess
import sys

import pytest

from sacscale.cli import main
from sacscale.commands import reference_env
from sacscale.pipeline.interpreter_env import check_interpreter_env

PLANTED = ("venv", "pip", "json", "multiprocessing", "torch")


@pytest.fixture
def planted(tmp_path, monkeypatch):
    """A working folder open to everyone (as /tmp is) holding modules named as the ones the
    children import; each records its import in `ran` and stops the child."""
    folder, ran = tmp_path / "theirs", tmp_path / "ran"
    folder.mkdir()
    folder.chmod(0o1777)
    for name in PLANTED:
        (folder / f"{name}.py").write_text(f"open({str(ran)!r}, 'a').write({name!r} + '\\n')\nraise SystemExit(1)\n")
    monkeypatch.chdir(folder)
    monkeypatch.delenv("PYTHONSAFEPATH", raising=False)
    return ran


@pytest.fixture
def pip_answers_offline(monkeypatch):
    """Each child runs as reference-env starts it, but offline: the venv without pip (made
    fast) and pip's exit taken as 0, so that each step and the record's probe are reached."""
    real_run, started = subprocess.run, []

    def run(cmd, *args, **kw):
        if cmd[1:3] == ["-m", "venv"]:
            cmd = [*cmd[:3], "--without-pip", *cmd[3:]]
        done = real_run(cmd, *args, **kw)
        started.append((cmd[1:3], done.returncode))
        return subprocess.CompletedProcess(cmd, 0) if cmd[1:3] == ["-m", "pip"] else done
    monkeypatch.setattr(reference_env.subprocess, "run", run)
    return started


def _ran(ran) -> list[str]:
    return ran.read_text().split() if ran.exists() else []


def test_creation_runs_none_of_the_working_folders_modules(tmp_path, planted, pip_answers_offline, capsys):
    req = tmp_path / "req.txt"
    req.write_text("numpy\n")
    python = tmp_path / "ref" / "bin" / "python"
    code = main(["reference-env", "--create", "--python", str(python), "--requirements", str(req),
                 "--output", str(tmp_path / "r.json")])
    assert _ran(planted) == []
    # venv made the environment; pip started from it and found no pip there (its own, not theirs);
    # the record's probe found no reference there (its own json imported)
    assert pip_answers_offline == [(["-m", "venv"], 0), (["-m", "pip"], 1), (["-m", "pip"], 1), (["-I", "-c"], 1)]
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert code == 1 and "cannot import the reference: " in err and "No module named 'unilab'" in err, err


def test_recording_an_environment_runs_none_of_the_working_folders_modules(tmp_path, planted, capsys):
    code = main(["reference-env", "--python", sys.executable, "--output", str(tmp_path / "r.json")])
    assert _ran(planted) == []
    err = capsys.readouterr().err.strip()
    assert code == 1 and err.endswith("No module named 'unilab'"), err


def test_record_runs_trainer_runs_none_of_the_working_folders_modules(tmp_path, planted, capsys):
    runs = tmp_path / "runs"
    runs.mkdir()
    trainer = "import json, multiprocessing; print(json.dumps('trained'))"  # no events: the run fails after
    code = main(["record-run", "--run-dir", str(runs / "r1"), "--work-dir", str(runs / ".r1.partial"),
                 "--attic", str(tmp_path / "attic"), "--timeout", "60", "--", sys.executable, "-c", trainer])
    assert _ran(planted) == []
    out = capsys.readouterr().out
    assert code == 1 and '"trained"' in out and "it wrote no rank-0 event file" in out


def test_plannings_trial_import_runs_none_of_the_working_folders_modules(planted):
    """Planning tries the run's TORCH_LOGS in an interpreter that imports torch, started in
    Snakemake's working folder (not through the CLI)."""
    check_interpreter_env({"TORCH_LOGS": "+dynamo,-inductor"}, "runs.r1.env")  # torch's own accepts it
    assert _ran(planted) == []


def test_the_setting_ends_with_the_command(monkeypatch):
    monkeypatch.delenv("PYTHONSAFEPATH", raising=False)
    with pytest.raises(SystemExit):
        main(["--version"])
    assert "PYTHONSAFEPATH" not in os.environ
