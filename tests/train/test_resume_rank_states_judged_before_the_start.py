"""Every rank state (checkpoints/rank{r}.pt) of a `train --resume` is judged before the run
starts: exit 2, its one line, the run folder byte for byte as it was. They were judged only
inside each rank once the run had begun: exit 1, and the finished run's train_meta.json was
rewritten "failed" (a stop between the final.pt and rank{r}.pt writes left rank0.pt an
iteration behind final.pt)."""

import hashlib
import json
import shutil

import pytest
from resume_copies import edit_rank_state, trained_run
import torch

DONE = 2  # the trained run's iterations


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A finished run that saved its replay buffers and normaliser rows, trained once for the module."""
    return trained_run(tmp_path_factory.mktemp("rank_states"), DONE, "--checkpoint-replay", "--obs-norm")


def _set(key, value):
    return lambda s: s.__setitem__(key, value)


def _set_learner(key, value):
    return lambda s: s["learner"].__setitem__(key, value)


def _replay_rows(make):
    return lambda s: s["learner"]["replay"].__setitem__("rows", make(s["learner"]["replay"]["rows"]))


NOT_WRITTEN = "not a checkpoint the trainer wrote"
# case: (edit of rank0.pt, the problem named in the line's parentheses, or the whole line's text)
CASES = {
    "earlier_iteration": (_set("iteration", DONE - 1),
                          lambda r: f"--resume {r}: rank 0's state is from iteration {DONE - 1}, the checkpoint from "
                                    f"{DONE} (a stop between the two writes); nothing consistent to resume"),
    "another_ranks_file": (_set("rank", 1), lambda r: f"--resume: {r}/checkpoints/rank0.pt: holds rank 1's state, "
                                                      "not rank 0's"),
    "curriculum_of_five": (_set("curriculum", [0.1] * 5),
                           "its curriculum holds 5 values, not 2 (penalty scale, mean episode length)"),
    "env_steps_nan": (_set("env_steps", float("nan")), "its 'env_steps' is float"),
    "learner_not_a_tensor": (_set_learner("rng", [1, 2, 3]), "learner.rng is list, not a tensor"),
    "learner_unknown_key": (_set_learner("extra", torch.zeros(1)),
                            "learner.extra: not part of a rank's learning state (it has rng, iterations, replay, "
                            "fresh, fresh_pending)"),
    "learner_iterations_nan": (_set_learner("iterations", float("nan")),
                               "learner.iterations nan is not a count of updates"),
    "replay_float64": (_replay_rows(lambda t: t.double()), "learner.replay.rows is float64, expected float32"),
    "replay_of_another_size": (lambda s: s["learner"]["replay"].__setitem__("capacity", 10**6),
                               "learner.replay holds 1000000 x "),
    "fresh_pending_nan": (_set_learner("fresh_pending", torch.tensor(float("nan"), dtype=torch.float64)),
                          "learner.fresh_pending holds NaN or inf"),
    "fresh_missing": (lambda s: s["learner"].pop("fresh"),
                      "its 'learner.fresh' and 'learner.fresh_pending' are missing (a run with --obs-norm saves "
                      "them)"),
}


def _hashes(run):
    return {p.relative_to(run): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(run.rglob("*"))
            if p.is_file()}


def _resumed(run, capsys):
    from sacscale.cli import main

    capsys.readouterr()
    code = main(["train", "--resume", str(run), "--iterations", str(DONE + 2)])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("case", CASES)
def test_a_rank_state_the_trainer_did_not_write_is_refused_before_the_run_starts(trained, tmp_path, capsys, case):
    edit, says = CASES[case]
    run = tmp_path / "run"
    shutil.copytree(trained, run)
    edit_rank_state(run, edit)
    status = json.loads((run / "train_meta.json").read_text())["status"]
    before = _hashes(run)
    code, err = _resumed(run, capsys)
    assert code == 2 and "Traceback" not in err, err
    line = says(run) if callable(says) else f"--resume: {run / 'checkpoints' / 'rank0.pt'}: {NOT_WRITTEN} ({says}"
    assert err.strip().splitlines()[0].startswith(f"sacscale train: error: {line}"), err
    assert len(err.strip().splitlines()) == 1, err
    assert _hashes(run) == before  # nothing written: the run was never started
    assert json.loads((run / "train_meta.json").read_text())["status"] == status


def test_the_rank_states_the_trainer_writes_pass_and_non_finite_replay_rows_are_kept(trained, tmp_path):
    """The trainer keeps a non-finite transition in its replay (marked, never sampled) and
    saves it so: such a row is no reason to refuse."""
    from sacscale.train.config import TrainConfig
    from sacscale.train.resume import resume_config

    run = tmp_path / "run"
    shutil.copytree(trained, run)
    edit_rank_state(run, lambda s: s["learner"]["replay"]["rows"][0].fill_(float("nan")))
    state = torch.load(run / "checkpoints" / "rank0.pt", weights_only=True)
    assert state["learner"]["replay"]["rows"].shape[0] > 0 and "fresh" in state["learner"]
    resumed = resume_config(TrainConfig(resume=str(run), iterations=DONE + 2))
    assert resumed.checkpoint_replay and resumed.obs_norm
