"""A plain `sacscale train --log-dir X` where a record-run holds its lock beside X (X its
run folder's name, or its work folder) is refused in one line naming that record-run, exit
2, nothing made: it made record-run's run folder meanwhile, and record-run, its run
completed, could not move the run into place. The trainer record-run starts in its work
folder (the folder record-run names to it) trains there as before."""

import json
import os
import subprocess
import sys

from cli_runs import one_line, sacscale
from test_run_folder_held_by_another_run import ARGS

from sacscale.locks import RECORDED_IN_VARIABLE, lock_beside


def test_a_train_into_a_folder_a_record_run_holds_is_refused(tmp_path):
    run = tmp_path / "run"
    with lock_beside(run) as lock:  # the record-run, in this process
        one_line(sacscale("train", *ARGS, "--iterations", "1", "--log-dir", run),
                 f"sacscale train: error: --log-dir {run}: a sacscale record-run is recording a run in this folder "
                 f"(pid {os.getpid()} holds {lock}); nothing was started: choose a new directory")
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_only_the_work_folder_record_run_names_is_let_through(tmp_path, monkeypatch):
    run, work = tmp_path / "run", tmp_path / ".run.partial"
    monkeypatch.setenv(RECORDED_IN_VARIABLE, os.path.realpath(work))  # as record-run's trainer has it
    with lock_beside(run) as lock:  # the record-run's lock of its run folder
        one_line(sacscale("train", *ARGS, "--iterations", "1", "--log-dir", run),
                 f"sacscale train: error: --log-dir {run}: a sacscale record-run is recording a run in this folder "
                 f"(pid {os.getpid()} holds {lock}); nothing was started: choose a new directory")
    assert not run.exists()


def test_record_runs_own_trainer_trains_in_its_work_folder(tmp_path):
    run, work = tmp_path / "run", tmp_path / ".run.partial"
    done = subprocess.run([sys.executable, "-m", "sacscale.cli", "record-run", "--run-dir", run, "--work-dir", work,
                           "--attic", tmp_path / "attic", "--timeout", "300", "--", sys.executable, "-m",
                           "sacscale.cli", "train", *ARGS, "--iterations", "1", "--log-dir", work],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads((run / "run.json").read_text())["status"] == "completed"
