"""Every rank state (checkpoints/rank{r}.pt) of a `train --resume` is judged before the run
starts: exit 2, its one line, the run folder byte for byte as it was. They were judged only
inside each rank once the run had begun: exit 1, and the finished run's train_meta.json was
rewritten "failed" (a stop between the final.pt and rank{r}.pt writes left rank0.pt an
iteration behind final.pt)."""

import hashlib
import json
import shutil

import pytest
from resume_copies import edit_final, edit_rank_state, trained_run
import torch

DONE = 2  # the trained run's iterations
ENVS = 4  # its environments (resume_copies.TINY_ARGS)


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
    # the random state, judged as the CPU generator judges it (torch refused it only in the rank)
    "rng_short": (_set_learner("rng", torch.zeros(10, dtype=torch.uint8)),
                  "learner.rng holds 10 bytes, a CPU generator's state 5056)"),
    "rng_not_mt19937": (_set_learner("rng", torch.zeros(5056, dtype=torch.uint8)),
                        "learner.rng is not a CPU generator's state: Invalid mt19937 state)"),
    # counts and curriculum held to what the trainer writes (they were held only to finite and >= 0)
    "env_steps_past_the_total": (_set("env_steps", 10**30),
                                 f"its env_steps {10**30} is not the {DONE * ENVS} of {DONE} iterations of {ENVS} "
                                 "envs)"),
    "curriculum_huge": (_set("curriculum", [1e308, 1e308]),
                        "its curriculum's penalty scale 1e+308 is outside the trainer's range 0.0625..0.125)"),
    "curriculum_length_past_an_episode": (_set("curriculum", [0.1, 1001.0]),
                                          "its curriculum's mean episode length 1001.0 is outside 0..1000)"),
    "learner_iterations_huge": (_set_learner("iterations", 10**30),
                                f"learner.iterations {10**30} is not a count of updates (one at most in each of "
                                f"the {DONE} iterations))"),
    # learner values held to what the trainer writes, not only to their type and shape
    "fresh_pending_five": (_set_learner("fresh_pending", torch.tensor(5.0, dtype=torch.float64)),
                           f"learner.fresh_pending 5.0 is not 0 or 1 (whether its {ENVS} rows are still to be "
                           "merged))"),
    "fresh_pending_negative": (_set_learner("fresh_pending", torch.tensor(-1.0, dtype=torch.float64)),
                               "learner.fresh_pending -1.0 is not 0 or 1"),
    "replay_pos_behind_its_size": (lambda s: s["learner"]["replay"].__setitem__("pos", 3),
                                   f"learner.replay's pos 3 is not its size {DONE * ENVS}: a buffer not yet full "
                                   "(64 rows) writes next where its rows end)"),
    "replay_rows_never_collected": (lambda s: s["learner"]["replay"].update(
                                        size=40, pos=40, rows=torch.zeros(40, s["learner"]["replay"]["row_dim"])),
                                    f"learner.replay's size 40 is more than the {DONE * ENVS} rows the run has "
                                    "collected)"),
    # no update yet, so no AdamW state in final.pt: an update count beside it is not the trainer's
    "learner_iterations_without_optimizer_steps": (_set_learner("iterations", 1),
                                                   "final.pt's optimizers.critic has made 0 step(s), its "
                                                   "learner.iterations 1 make 1 (1 an update))"),
}


def _hashes(run):
    return {p.relative_to(run): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(run.rglob("*"))
            if p.is_file()}


def _resumed(run, capsys):
    from sacscale.cli import main

    capsys.readouterr()
    code = main(["train", "--resume", str(run), "--iterations", str(DONE + 2)])
    return code, capsys.readouterr().err


def _edited_copy(trained, tmp_path, edit):
    """A copy of the trained run, `edit` (run folder -> None) applied to it."""
    run = tmp_path / "run"
    shutil.copytree(trained, run)
    edit(run)
    return run


@pytest.mark.parametrize("case", CASES)
def test_a_rank_state_the_trainer_did_not_write_is_refused_before_the_run_starts(trained, tmp_path, capsys, case):
    edit, says = CASES[case]
    run = _edited_copy(trained, tmp_path, lambda r: edit_rank_state(r, edit))
    status = json.loads((run / "train_meta.json").read_text())["status"]
    before = _hashes(run)
    code, err = _resumed(run, capsys)
    assert code == 2 and "Traceback" not in err, err
    line = says(run) if callable(says) else f"--resume: {run / 'checkpoints' / 'rank0.pt'}: {NOT_WRITTEN} ({says}"
    assert err.strip().splitlines()[0].startswith(f"sacscale train: error: {line}"), err
    assert len(err.strip().splitlines()) == 1, err
    assert _hashes(run) == before  # nothing written: the run was never started
    assert json.loads((run / "train_meta.json").read_text())["status"] == status


def test_a_fifo_at_a_rank_state_is_named_as_what_it_is(trained, tmp_path, capsys):
    """Something there that is not a file was called missing."""
    import os

    run = tmp_path / "run"
    shutil.copytree(trained, run)
    part = run / "checkpoints" / "rank0.pt"
    part.unlink()
    os.mkfifo(part)
    before = _hashes(run)
    code, err = _resumed(run, capsys)
    assert code == 2 and err.strip().splitlines() == [f"sacscale train: error: --resume {run}: {part} is a FIFO, "
                                                      "not a file"], err
    assert _hashes(run) == before


def test_the_rank_states_the_trainer_writes_pass_and_non_finite_replay_rows_are_kept(trained, tmp_path):
    """The trainer keeps a non-finite transition in its replay (marked, never sampled) and
    saves it so: such a row is no reason to refuse."""
    from sacscale.train.config import TrainConfig
    from sacscale.train.resume import resume_config

    run = _edited_copy(trained, tmp_path,
                       lambda r: edit_rank_state(r, lambda s: s["learner"]["replay"]["rows"][0].fill_(float("nan"))))
    state = torch.load(run / "checkpoints" / "rank0.pt", weights_only=True)
    assert state["learner"]["replay"]["rows"].shape[0] > 0 and "fresh" in state["learner"]
    resumed = resume_config(TrainConfig(resume=str(run), iterations=DONE + 2))
    assert resumed.checkpoint_replay and resumed.obs_norm


def test_a_final_checkpoint_whose_total_is_not_its_iterations_steps_is_refused(trained, tmp_path, capsys):
    """final.pt's total_env_steps is its iterations x environments x ranks (it was held only to
    finite and >= 0)."""
    run = _edited_copy(trained, tmp_path, lambda r: edit_final(r, lambda c: c.__setitem__("total_env_steps", 10**30)))
    before = _hashes(run)
    code, err = _resumed(run, capsys)
    assert code == 2 and err.strip().splitlines() == [
        f"sacscale train: error: --resume: {run / 'checkpoints' / 'final.pt'}: {NOT_WRITTEN} (its total_env_steps "
        f"{10**30} is not the {DONE * ENVS} of {DONE} iterations of {ENVS} envs on 1 rank(s))"], err
    assert _hashes(run) == before


def _state_tensor(name, make):
    return lambda c: c["learner_state"].__setitem__(name, make(c["learner_state"][name]))


NORMALISER_CASES = {  # final.pt's observation statistics: held only to finite tensors, they resumed silently
    "a negative row count": (_state_tensor("actor_obs_count", lambda t: torch.full_like(t, -5.0)),
                             "learner_state.actor_obs_count -5.0 is not a count of the 8 rows the run has collected"),
    "more rows than collected": (_state_tensor("critic_obs_count", lambda t: torch.full_like(t, 1e300)),
                                 "learner_state.critic_obs_count 1e+300 is not a count of the 8 rows"),
    "a negative variance": (_state_tensor("actor_obs_var", lambda t: -t.abs() - 1),
                            "learner_state.actor_obs_var holds a negative variance"),
    "a scale past 1 / eps": (_state_tensor("actor_obs_scale", lambda t: t * 1e30),
                             "learner_state.actor_obs_scale holds a value outside 0..100, 1 / (std + obs_norm_eps)"),
    # of another shape: torch's "only one element tensors can be converted to Python scalars" or its
    # size error (exit 1, no file named), or a KeyError, where a field was left out
    "a count of two values": (_state_tensor("actor_obs_count", lambda t: torch.full((2,), float(t), dtype=t.dtype)),
                              "learner_state.actor_obs_count has shape (2,), expected 0 dimension(s) ())"),
    "a mean of a column less": (_state_tensor("actor_obs_mean", lambda t: t[:-1]),
                                "learner_state.actor_obs_mean has shape ("),
    "a variance of two dimensions": (_state_tensor("critic_obs_var", lambda t: t.reshape(1, -1)),
                                     "learner_state.critic_obs_var has shape (1, "),
    "a scale left out": (lambda c: c["learner_state"].pop("critic_obs_scale"),
                         "its 'learner_state.critic_obs_scale' is missing)"),
    "a tensor the learner has none of": (lambda c: c["learner_state"].__setitem__("actor_obs_median", torch.zeros(1)),
                                         "learner_state.actor_obs_median: not a state tensor of the learner)"),
    # the normaliser apart from the statistics the learner sets it from: the collector's
    # "actions contain NaN or inf" or divergence at the first update once the run had started, or
    # a run trained on statistics no observation of the task has, silently
    "a shift apart from its mean": (_state_tensor("actor_obs_shift", lambda t: t * 1e30),
                                    "learner_state.actor_obs_shift is not its actor_obs_mean, which the learner sets "
                                    "it to)"),
    "a mean apart from its shift": (_state_tensor("actor_obs_mean", lambda t: t + 1e30),
                                    "learner_state.actor_obs_shift is not its actor_obs_mean"),
    "a variance apart from its scale": (_state_tensor("critic_obs_var", lambda t: torch.full_like(t, 3e38)),
                                        "learner_state.critic_obs_scale[0] "),
}


@pytest.mark.parametrize("case", NORMALISER_CASES)
def test_a_normaliser_state_the_learner_cannot_make_is_refused_before_the_start(trained, tmp_path, capsys, case):
    edit, says = NORMALISER_CASES[case]
    run = _edited_copy(trained, tmp_path, lambda r: edit_final(r, edit))
    before = _hashes(run)
    code, err = _resumed(run, capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"--resume: {run / 'checkpoints' / 'final.pt'}: {NOT_WRITTEN} ({says}" in err, err
    assert _hashes(run) == before


@pytest.mark.parametrize("offset, says", [
    (8, None),
    (6, "learner.rng's Philox offset 6 is not a multiple of 4, as torch needs"),
    (None, "learner.rng holds 5056 bytes, a CUDA generator's state 16 (seed, offset)"),
])
def test_a_cuda_runs_random_state_is_judged_without_cuda(offset, says):
    """A CUDA run saves the device generator's seed and Philox offset (8 bytes each); torch's
    CUDA set_state takes 16 bytes whose offset is a multiple of 4. Judged here on the CPU."""
    import sys

    from sacscale.train.resume_checks import learner_problem

    rng = torch.Generator().get_state() if offset is None else torch.frombuffer(
        bytearray((12345).to_bytes(8, sys.byteorder) + offset.to_bytes(8, sys.byteorder)), dtype=torch.uint8)
    assert learner_problem({"rng": rng, "iterations": 0}, _NoObsNorm(), 4, 0, on_cuda=True) == says


class _NoObsNorm:
    obs_norm = False
