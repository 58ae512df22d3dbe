"""A plain `sacscale train --log-dir run/inner` while a record-run holds its lock beside `run`
(its run folder's name) or its work folder is refused in one line naming that record-run, exit
2, nothing made: record-run would set the run folder aside, or rename its work folder, with
the train inside. The record-run's own trainer may still write inside the work folder it names."""

import os

import pytest
from cli_runs import one_line, sacscale
from test_run_folder_held_by_another_run import ARGS

from sacscale.locks import RECORDED_IN_VARIABLE, lock_beside


@pytest.mark.parametrize("name", ["run", ".run.partial"])
def test_a_train_inside_a_folder_a_record_run_holds_is_refused(tmp_path, name):
    held = tmp_path / name
    inner = held / "inner"
    if name.endswith(".partial"):
        held.mkdir()  # record-run makes its work folder under its lock; only record-run makes one
    with lock_beside(held) as lock:  # the record-run, in this process
        one_line(sacscale("train", *ARGS, "--iterations", "1", "--log-dir", inner),
                 f"sacscale train: error: --log-dir {inner}: inside {held}, where another sacscale command (a "
                 f"record-run perhaps) is at work (pid {os.getpid()} holds {lock}); nothing was started: choose a "
                 "directory outside it")
    assert sorted(p.name for p in tmp_path.iterdir()) == ([name] if held.exists() else []) and not inner.exists()


def test_record_runs_own_trainer_may_write_inside_its_work_folder(tmp_path, monkeypatch):
    work = tmp_path / ".run.partial"
    work.mkdir()  # as record-run has made it before starting its trainer
    monkeypatch.setenv(RECORDED_IN_VARIABLE, os.path.realpath(work))  # as record-run's trainer has it
    with lock_beside(work):
        done = sacscale("train", *ARGS, "--iterations", "1", "--log-dir", work / "inner")
    assert done.returncode == 0, done.stderr
