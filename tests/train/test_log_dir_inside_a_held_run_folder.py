"""A new `train --log-dir` inside a run folder another command holds (a resume: its lock
`.<name>.trainer-lock` beside it). Before: only the held folder itself was refused as a log
directory, so `--log-dir RUN/sub` (or through a link to RUN) wrote a whole run inside the
folder being resumed. Now every folder above the log directory is looked at, and one
held refuses it before anything is made (exit 2, as the held folder itself is)."""

import subprocess
import sys

import pytest

from cli_runs import sacscale

HOLD = ("import sys; from pathlib import Path; from sacscale.locks import lock_beside\n"
        "with lock_beside(Path(sys.argv[1]), '.trainer-lock'):\n    print('held', flush=True); sys.stdin.read()")
ARGS = ["--devices", "cpu", "--num-envs", "4", "--batch-size", "16", "--iterations", "2", "--no-compile"]


@pytest.fixture()
def held_run(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    (run / "train_meta.json").write_text("{}")
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(run)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    assert holder.stdout.readline().strip() == "held"
    yield run, holder.pid
    holder.stdin.close()
    holder.wait(timeout=30)


@pytest.mark.parametrize("through_a_link", [False, True])
def test_a_log_dir_inside_a_held_run_folder_is_refused(held_run, tmp_path, through_a_link):
    run, pid = held_run
    if through_a_link:
        (tmp_path / "alias").symlink_to(run)
    log_dir = (tmp_path / "alias" if through_a_link else run) / "sub" / "deeper"
    done = sacscale("train", *ARGS, "--log-dir", log_dir)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == (f"sacscale train: error: --log-dir {log_dir}: inside {run}, where another "
                                   f"sacscale train is training (pid {pid} holds {tmp_path}/.run.trainer-lock); "
                                   "choose a directory outside it")
    assert sorted(p.name for p in run.iterdir()) == ["train_meta.json"]  # nothing made there
