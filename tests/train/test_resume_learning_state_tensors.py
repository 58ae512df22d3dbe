"""Every tensor of a resume checkpoint's learning state (`learner_state`, `optimizers`) is
held to what the trainer writes: dense, on the CPU, of its dtype, finite. A meta or sparse
one ended in torch's copy error once the run had started (exit 1, naming neither file nor
field, the run recorded `failed`); a NaN log-alpha was resumed and then reported as
divergence; an int32 critic was resumed and trained on. Now each is refused before the run
starts: one line naming final.pt and the field, exit 2, nothing written."""

import subprocess
import sys

import pytest
from resume_copies import crafted_copy
import torch

from sacscale.train.resume import _resumable_checkpoint

SMALL = '{"learning_starts": 32, "actor_hidden": [32], "critic_hidden": [32], "num_atoms": 11}'
ARGS = ["--devices", "cpu", "--num-envs", "8", "--batch-size", "32", "--log-every", "2", "--replay-per-env", "16",
        "--num-critic-updates", "1", "--num-actor-updates", "1", "--extra", SMALL, "--timeout-s", "120", "--obs-norm"]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    run = tmp_path_factory.mktemp("resume_tensors") / "run"
    done = subprocess.run([sys.executable, "-m", "sacscale.cli", "train", "--iterations", "4", *ARGS,
                           "--log-dir", str(run)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return run


def _state(name, make):
    return lambda c: c["learner_state"].__setitem__(name, make(c["learner_state"][name]))


def _nested(depth):
    tree = [torch.zeros(1)]
    for _ in range(depth):
        tree = [tree]
    return tree


def _moment(make):
    return lambda c: c["optimizers"]["critic"][0].__setitem__("exp_avg", make(c["optimizers"]["critic"][0]["exp_avg"]))


CRAFTED = {
    "critic_meta": (_state("critic", lambda t: torch.empty(t.shape, device="meta")),
                    "learner_state.critic is a tensor on the meta device, expected one on the CPU"),
    "log_alpha_sparse": (_state("log_alpha", lambda t: t.to_sparse()),
                         "learner_state.log_alpha is a tensor of layout sparse_coo, expected a dense one"),
    "log_alpha_nan": (_state("log_alpha", lambda t: torch.full_like(t, float("nan"))),
                      "learner_state.log_alpha holds NaN or inf"),
    "critic_int32": (_state("critic", lambda t: t.int()), "learner_state.critic is int32, expected float32"),
    "count_float32": (_state("actor_obs_count", lambda t: t.float()),
                      "learner_state.actor_obs_count is float32, expected float64"),
    "critic_not_a_tensor": (_state("critic", lambda t: 5), "learner_state.critic is int, not a tensor"),
    "optimizers_a_list": (lambda c: c["optimizers"].__setitem__("critic", _nested(300)),
                          "optimizers.critic is not an optimizer's state of one parameter"),
    "optimizers_other_moments": (lambda c: c["optimizers"].__setitem__("critic", {0: {"momentum": torch.zeros(1)}}),
                                 "optimizers.critic.0 is not AdamW's state (step, exp_avg, exp_avg_sq)"),
    "optimizers_unknown": (lambda c: c["optimizers"].__setitem__("critic2", {}),
                           "optimizers.critic2: no optimizer of the learner (it has critic, alpha, actor)"),
    "moment_meta": (_moment(lambda t: torch.empty(t.shape, device="meta")),
                    "optimizers.critic.0.exp_avg is a tensor on the meta device, expected one on the CPU"),
}


def _files(folder):
    return {p.relative_to(folder): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("case", CRAFTED)
def test_a_learning_state_tensor_the_trainer_never_writes_is_refused_before_the_run(run, tmp_path, capsys, case):
    from sacscale.cli import main

    edit, says = CRAFTED[case]
    crafted = crafted_copy(run, tmp_path, edit)
    before = _files(crafted)
    code = main(["train", "--resume", str(crafted), "--iterations", "6"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err, err
    assert err.strip().splitlines() == [
        f"sacscale train: error: --resume: {crafted}/checkpoints/final.pt: not a checkpoint the trainer wrote ({says})"]
    assert _files(crafted) == before  # train_meta.json still says completed: no run was started


def test_the_learning_state_the_trainer_writes_passes(run):
    ckpt = _resumable_checkpoint(run)
    assert {"actor_obs_count", "critic", "log_alpha"} <= set(ckpt["learner_state"])


def test_a_non_finite_optimizer_moment_is_named_as_a_state_that_cannot_be_resumed(run, tmp_path, capsys):
    # the trainer's divergence check watches the learner's tensors only, so it may write these itself
    from sacscale.cli import main

    crafted = crafted_copy(run, tmp_path, _moment(lambda t: torch.full_like(t, float("inf"))))
    code = main(["train", "--resume", str(crafted), "--iterations", "6"])
    err = capsys.readouterr().err
    assert code == 2 and err.strip().splitlines() == [
        f"sacscale train: error: --resume: {crafted}/checkpoints/final.pt: cannot be resumed "
        "(optimizers.critic.0.exp_avg holds NaN or inf: a run that was diverging, or an edited file)"], err
