"""`train --resume` runs the resumed policy once before the start, keeps a resumable pair of
checkpoint files whatever point of the two writes a stop comes at, and says what is there.
Finite policy weights that overflow (x1e20) passed every check and ended in the collector's
`actions contain NaN or inf` once the run had started (exit 1, the run recorded failed); a
kill between the rank state's write and final.pt's left a pair that did not match, the
previous one overwritten; a FIFO at final.pt was "no checkpoint there"."""

import hashlib
import os
import shutil
from types import SimpleNamespace

import pytest
from resume_copies import edit_final, edit_rank_state, trained_run
import torch

DONE = 2
FINAL, RANK0 = "checkpoints/final.pt", "checkpoints/rank0.pt"


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    return trained_run(tmp_path_factory.mktemp("plain"), DONE, "--checkpoint-every", "1")


@pytest.fixture(scope="module")
def normed(tmp_path_factory):
    return trained_run(tmp_path_factory.mktemp("normed"), DONE, "--obs-norm")


def _hashes(run):
    return {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(run.rglob("*")) if p.is_file()}


def _copy(run, tmp_path, name="run"):
    return shutil.copytree(run, tmp_path / name)


def _resumed(run, capsys, iterations=DONE + 2):
    from sacscale.cli import main

    capsys.readouterr()
    code = main(["train", "--resume", str(run), "--iterations", str(iterations)])
    return code, capsys.readouterr().err


def _scaled(*names, by):
    def edit(c):
        for name in names:
            target = c if name == "actor_flat" else c["learner_state"]
            key = name.removeprefix("learner_state.")
            target[key] = target[key] * by
    return edit


def _filled_all(names, value):
    return lambda c: [c["learner_state"][name].fill_(value) for name in names]


POLICY_CASES = {
    "actor weights x1e20": ("plain", _scaled("actor_flat", "learner_state.actor", by=1e20),
                            "its actor's actions on the task's first observations hold NaN or inf"),
    "critic weights x1e20": ("plain", _scaled("learner_state.critic", by=1e20),
                             "its critic's values on the task's first observations hold NaN or inf"),
    # its normaliser set from its statistics, as the learner sets it (shift = mean), but absurd
    "normaliser mean 1e30": ("normed", _filled_all(("actor_obs_mean", "actor_obs_shift"), 1e30),
                             "its actor's actions on the task's first observations hold NaN or inf"),
}


@pytest.mark.parametrize("case", POLICY_CASES)
def test_a_policy_whose_outputs_are_not_finite_is_refused_before_the_start(plain, normed, tmp_path, capsys, case):
    which, edit, says = POLICY_CASES[case]
    run = _copy(plain if which == "plain" else normed, tmp_path)
    edit_final(run, edit)
    before = _hashes(run)
    code, err = _resumed(run, capsys)
    assert code == 2 and err.strip().splitlines() == [
        f"sacscale train: error: --resume: {run / FINAL}: cannot be resumed ({says})"], err
    assert _hashes(run) == before


def test_a_fifo_at_final_pt_is_named_as_what_it_is(plain, tmp_path, capsys):
    run = _copy(plain, tmp_path)
    (run / FINAL).unlink()
    os.mkfifo(run / FINAL)
    code, err = _resumed(run, capsys)
    assert code == 2 and err.strip().splitlines() == [
        f"sacscale train: error: {run / FINAL}: a FIFO, not a regular file"], err


def test_a_rank_state_further_ahead_than_a_stop_leaves_is_not_blamed_on_a_stop(plain, tmp_path, capsys):
    run = _copy(plain, tmp_path)
    edit_rank_state(run, lambda s: s.__setitem__("iteration", DONE + 7))
    code, err = _resumed(run, capsys)
    assert code == 2 and err.strip().splitlines() == [
        f"sacscale train: error: --resume {run}: rank 0's state is from iteration {DONE + 7}, the checkpoint from "
        f"{DONE} (more than the checkpoint interval of 1 apart: they are not of one checkpoint); nothing consistent "
        "to resume"], err


class _Stop(BaseException):
    """A kill at one point of the checkpoint's writes."""


def _save_stopped(monkeypatch, run, at, iteration):
    """save_checkpoint of rank 0 at `iteration` into `run`, stopped at point `at`: after the
    rank state's write (before final.pt's) or after final.pt's (before the rank state is moved)."""
    from sacscale.train import checkpoint
    from sacscale.train.config import TrainConfig, sac_config

    cfg = TrainConfig(**{**torch.load(run / FINAL, weights_only=True)["train_config"], "log_dir": str(run)})
    shared, mine = torch.load(run / FINAL, weights_only=True), torch.load(run / RANK0, weights_only=True)
    learner = SimpleNamespace(learning_state=lambda with_replay: {
        **mine["learner"], "tensors": shared["learner_state"], "optimizers": shared["optimizers"]})
    writes = []
    real_save = checkpoint._save_atomic

    def save(obj, path):
        if at == "before final.pt" and path.name == "final.pt":
            raise _Stop
        writes.append(path.name)
        real_save(obj, path)

    def settle(folder, it):
        raise _Stop

    monkeypatch.setattr(checkpoint, "_save_atomic", save)
    if at == "before the move":
        monkeypatch.setattr(checkpoint, "_settle_rank_states", settle)
    with pytest.raises(_Stop):
        checkpoint.save_checkpoint(cfg, sac_config(cfg), learner, 0, iteration, iteration * cfg.num_envs, 1,
                                   shared["actor_flat"], mine["curriculum"])
    monkeypatch.undo()
    return writes


@pytest.mark.parametrize("at", ["before final.pt", "before the move"])
def test_a_stop_between_the_two_checkpoint_writes_leaves_a_pair_that_resumes(plain, tmp_path, capsys, monkeypatch,
                                                                              at):
    """The previous pair (or the new one) stays whole; the resumed run trains on and leaves
    the one layout, rank0.pt beside final.pt."""
    run = _copy(plain, tmp_path)
    writes = _save_stopped(monkeypatch, run, at, DONE + 1)
    assert writes[0] == f"rank0.it{DONE + 1}.pt"
    want = DONE if at == "before final.pt" else DONE + 1
    assert torch.load(run / FINAL, weights_only=True)["iteration"] == want
    code, err = _resumed(run, capsys, want + 2)
    assert code == 0, err
    assert f"resuming {run} at iteration {want}" in err
    names = sorted(p.name for p in (run / "checkpoints").iterdir())
    assert names == ["final.pt", "rank0.pt"], names
    assert torch.load(run / RANK0, weights_only=True)["iteration"] == want + 2


def test_the_checks_of_final_pt_are_made_again_when_the_rank_loads_it(plain, tmp_path):
    """A tensor of final.pt changed after the checks before the start is refused, not trained on."""
    from sacscale.learn.learner import FastSACLearner
    from sacscale.train.config import TrainConfig, TrainingError, sac_config
    from sacscale.train.resume import load_resume_state, resume_config

    run = _copy(plain, tmp_path)
    cfg = resume_config(TrainConfig(resume=str(run), iterations=DONE + 2))
    edit_final(run, _filled_all(("critic",), float("nan")))
    learner = FastSACLearner(sac_config(cfg), cfg.num_envs, torch.device("cpu"), compile=False, cuda_graph=False,
                             seed=0)
    with pytest.raises(TrainingError, match="learner_state.critic holds NaN or inf"):
        load_resume_state(cfg, learner, 0)
