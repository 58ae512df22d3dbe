"""A resumed run folder is one sitting's at a time. Two `train --resume D` at once both
trained on from one checkpoint into D (both exit 0, the same iterations logged twice in two
event files, train_meta.json with two sittings from one start). Now a resume holds D's lock
(`.D.trainer-lock` beside it) for its whole sitting: a second resume, by any spelling of D, is
refused at once with one line naming the holder (exit 2), and so is a new run given D as
--log-dir; the lock is removed when the sitting ends, also when it fails. The first resume
is stopped at a named function (evidence/paused_sacscale.py) while the others run: no
timing decides."""

import json
import shutil

import pytest

from cli_runs import one_line, sacscale
from paused_runs import finished, started_paused

SMALL = '{"learning_starts": 16, "actor_hidden": [16], "critic_hidden": [16], "num_atoms": 11}'
ARGS = ["--devices", "cpu", "--num-envs", "4", "--batch-size", "16", "--log-every", "1", "--replay-per-env", "16",
        "--num-critic-updates", "1", "--num-actor-updates", "1", "--extra", SMALL, "--no-compile",
        "--sim-threads", "1", "--timeout-s", "120"]


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A finished 2-iteration run, trained once for the module: each test resumes a copy."""
    run = tmp_path_factory.mktemp("trained") / "run"
    done = sacscale("train", *ARGS, "--iterations", "2", "--log-dir", run)
    assert done.returncode == 0, done.stderr
    return run


@pytest.fixture()
def run_dir(trained, tmp_path):
    return shutil.copytree(trained, tmp_path / "run", symlinks=True)


def held_by(pid: int, run) -> str:
    return f"another sacscale train is training in this run folder (pid {pid} holds {run.parent}/.run.trainer-lock)"


def test_a_second_resume_of_one_run_folder_is_refused_while_the_first_trains(run_dir, tmp_path):
    first = started_paused(tmp_path, "sacscale.train.job:run_training", "train", "--resume", run_dir,
                           "--iterations", "3")
    second = sacscale("train", "--resume", run_dir, "--iterations", "4")
    one_line(second, f"error: --resume {run_dir}: {held_by(first.pid, run_dir)}; nothing was started: resume it "
                     "once that one has ended")
    link = tmp_path / "link"
    link.symlink_to(run_dir)
    one_line(sacscale("train", "--resume", link, "--iterations", "4"), held_by(first.pid, run_dir))
    one_line(sacscale("train", *ARGS, "--iterations", "2", "--log-dir", run_dir),
             f"--log-dir {run_dir}: {held_by(first.pid, run_dir)}; nothing was started: choose a new directory")
    done = finished(tmp_path, first)
    assert done.returncode == 0, done.stderr
    meta = json.loads((run_dir / "train_meta.json").read_text())
    assert meta["status"] == "completed" and [s["from_iteration"] for s in meta["sittings"]] == [2]
    assert len(list((run_dir / "tb" / "rank0").iterdir())) == 2  # the first sitting's and this one's
    assert not (tmp_path / ".run.trainer-lock").exists()


def test_a_failed_resume_leaves_the_folder_free(run_dir, tmp_path):
    refused = sacscale("train", "--resume", run_dir, "--iterations", "1")
    assert refused.returncode == 2 and "give --iterations larger than that" in refused.stderr, refused.stderr
    assert not (tmp_path / ".run.trainer-lock").exists()
    again = sacscale("train", "--resume", run_dir, "--iterations", "3")
    assert again.returncode == 0, again.stderr
