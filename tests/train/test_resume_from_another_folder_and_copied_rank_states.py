"""Two resumes judged before the run starts:
- a run trained with a relative `--model`, resumed from another working folder, was refused as
  `--model PATH: no such file`, though the file is there from the folder the run started in;
  now the line says the recorded path is relative and that `--model PATH` resumes it;
- a two-rank run whose rank1.pt is rank 0's state with its `rank` field edited resumed, both
  ranks then drawing one random stream (the trainer seeds each rank's generator apart); now
  refused, naming both files."""

import subprocess
import sys

import pytest
from resume_copies import SMALL, edit_rank_state
import torch

# resume_copies.TINY_ARGS without its --devices
TINY = ["--num-envs", "4", "--batch-size", "16", "--log-every", "1", "--replay-per-env", "16", "--num-critic-updates",
        "1", "--num-actor-updates", "1", "--extra", SMALL, "--no-compile", "--sim-threads", "1", "--timeout-s", "120"]


def _train(cwd, *args):
    return subprocess.run([sys.executable, "-m", "sacscale.cli", "train", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=300)


def test_a_run_with_a_relative_model_resumed_from_another_folder_is_told_to_give_model(tmp_path):
    from sacscale.task.g1_model import build_g1_model, save_model

    start, elsewhere = tmp_path / "start", tmp_path / "elsewhere"
    (start / "models").mkdir(parents=True)
    elsewhere.mkdir()
    save_model(build_g1_model(), start / "models" / "g1.mjb")
    run = start / "run"
    done = _train(start, "--devices", "cpu", *TINY, "--model", "models/g1.mjb", "--iterations", "2",
                  "--log-dir", str(run))
    assert done.returncode == 0, done.stderr
    refused = _train(elsewhere, "--resume", str(run), "--iterations", "3")
    assert refused.returncode == 2 and refused.stderr.strip().splitlines() == [
        f"sacscale train: error: --resume {run}: the run's --model models/g1.mjb is a relative path, recorded as "
        f"given in the folder the run was started from; from here ({elsewhere}) it names no file. Give --model PATH "
        "(that model file, as reached from here) again to resume it"], refused.stderr
    resumed = _train(elsewhere, "--resume", str(run), "--iterations", "3", "--model", "../start/models/g1.mjb")
    assert resumed.returncode == 0, resumed.stderr


@pytest.fixture(scope="module")
def two_ranks(tmp_path_factory):
    run = tmp_path_factory.mktemp("two_ranks") / "run"
    done = _train(run.parent, "--devices", "cpu,cpu", *TINY, "--iterations", "2", "--log-dir", str(run))
    assert done.returncode == 0, done.stderr
    return run


def test_a_rank_state_copied_over_another_ranks_is_refused_naming_both(two_ranks, tmp_path):
    import shutil

    run = tmp_path / "run"
    shutil.copytree(two_ranks, run)
    ckpts = run / "checkpoints"
    rank0 = torch.load(ckpts / "rank0.pt", weights_only=True)
    assert not torch.equal(rank0["learner"]["rng"], torch.load(ckpts / "rank1.pt", weights_only=True)["learner"]["rng"])
    shutil.copyfile(ckpts / "rank0.pt", ckpts / "rank1.pt")
    edit_rank_state(run, lambda s: s.__setitem__("rank", 1), rank=1)
    refused = _train(tmp_path, "--resume", str(run), "--iterations", "3")
    assert refused.returncode == 2 and refused.stderr.strip().splitlines() == [
        f"sacscale train: error: --resume: {ckpts / 'rank1.pt'}: not a checkpoint the trainer wrote (its learner.rng "
        f"is the random state {ckpts / 'rank0.pt'} holds; every rank draws a stream of its own, so one of the two is "
        "the other's copy)"], refused.stderr


def test_the_two_ranks_the_trainer_wrote_resume(two_ranks, tmp_path):
    import shutil

    run = tmp_path / "run"
    shutil.copytree(two_ranks, run)
    resumed = _train(tmp_path, "--resume", str(run), "--iterations", "3")
    assert resumed.returncode == 0, resumed.stderr
