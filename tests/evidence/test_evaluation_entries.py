"""Each per_command entry of an evaluation record is held to what evaluate can have written:
an episode that did not fall is scored at every step from settle_steps to steps, a fallen
one at fewer, so fall_rate x episodes is whole and samples lies within what they give; the
scores are null exactly where no step was scored. An entry rewritten together with its
pooled overall (so the pooling agrees) is named; every committed record passes."""

import copy
import functools
import json

import pytest
from set_copies import REPO, copy_committed_set, edit_record, remake_manifest

from sacscale.evidence.eval_entries import entry_problems
from sacscale.evidence.eval_record import evaluation_problems
from sacscale.evidence.verify import verify

SET = "h200x1_shared_short"
EVAL = "eval/shared_r1_n1_pool7.json"
# this record: 8 episodes a command, steps 1000, settle_steps 50 (951 scored steps an
# episode that did not fall); forward_0.5: all 8 fell, 71 samples


@functools.cache
def _record() -> dict:
    """Read when a test runs, not at collection: a checkout without the committed sets (a GPU
    machine's slim copy) still collects the suite."""
    return json.loads((REPO / "results" / SET / EVAL).read_text())


def _none_fell(record):
    """Every command's fall rate 0, and the overall with them: pooling agrees."""
    for scores in record["per_command"].values():
        scores["fall_rate"] = 0.0
    record["overall"]["fall_rate"] = 0.0


def _edited(edit):
    record = copy.deepcopy(_record())
    edit(record["per_command"]["forward_0.5"])
    return record


def test_fall_rates_rewritten_with_their_overall_are_named_by_verify(tmp_path):
    root = copy_committed_set(tmp_path, SET)
    edit_record(root, EVAL, _none_fell)
    remake_manifest(root)
    records = verify(root, report_pending=True).records
    assert (f"{EVAL}: per_command.forward_0.5.samples 71, but of its 8 episodes (fall_rate 0.0) 8 did not fall, "
            "scored at all 951 steps (protocol.settle_steps 50 to steps 1000) each: exactly 7608") in records, records


_STEPS = "951 steps (protocol.settle_steps 50 to steps 1000)"
_FOUND_OUT = {
    "fall_rate_not_whole": (lambda e: e.update(fall_rate=0.3), "per_command.forward_0.5.fall_rate 0.3 of 8 episodes is "
                            "2.4 fallen: not a whole number of episodes, as evaluate counts them"),
    "fall_rate_past_1": (lambda e: e.update(fall_rate=1.5), "per_command.forward_0.5.fall_rate 1.5: not a number in "
                         "0..1, the share of its episodes that fell"),
    "samples_past_the_fallen_most": (lambda e: e.update(samples=8 * 951), "per_command.forward_0.5.samples 7608, but "
                                     f"of its 8 episodes (fall_rate 1.0) 8 fell, scored at fewer than {_STEPS} each: "
                                     "0..7600"),
    "samples_below_the_standing_least": (lambda e: e.update(fall_rate=0.5, samples=100), "per_command.forward_0.5."
                                         "samples 100, but of its 8 episodes (fall_rate 0.5) 4 did not fall, scored at "
                                         f"all {_STEPS} each and 4 fell, scored at fewer each: 3804..7604"),
    "samples_not_a_count": (lambda e: e.update(samples=71.0), "per_command.forward_0.5.samples 71.0: not a count of "
                            "scored steps"),
    "null_error_with_samples": (lambda e: e["rms_error"].update(lin_vel_xy=None), "per_command.forward_0.5.rms_error."
                                "lin_vel_xy: null, but samples counted: evaluate stores null only where samples is 0"),
    "negative_rms": (lambda e: e["rms_error"].update(yaw_rate=-0.5), "per_command.forward_0.5.rms_error.yaw_rate: "
                     "-0.5: not a number >= 0, as evaluate writes it"),
    "tracking_past_1": (lambda e: e["normalised_tracking"].update(yaw_rate=1.25), "per_command.forward_0.5."
                        "normalised_tracking.yaw_rate: 1.25: not a number in 0..1, as evaluate writes it"),
    "velocity_not_a_number": (lambda e: e["mean_achieved"].__setitem__(0, "fast"), "per_command.forward_0.5."
                              "mean_achieved.0: fast: not a finite number, as evaluate writes it"),
    "number_with_no_sample": (lambda e: e.update(samples=0), "per_command.forward_0.5.mean_achieved.1: "
                              "-0.8911505482262778, but samples 0: with no scored step evaluate stores null"),
}


@pytest.mark.parametrize("edit, says", _FOUND_OUT.values(), ids=_FOUND_OUT.keys())
def test_an_entry_evaluate_cannot_have_written_is_named(edit, says):
    assert f"r: {says}" in evaluation_problems("r", _edited(edit))


def test_an_entry_of_fallen_episodes_with_no_scored_step_passes():
    """Each episode fell before settle_steps: nothing scored, every score null."""
    def fell_at_once(entry):
        entry.update(samples=0, rms_error=dict.fromkeys(entry["rms_error"]),
                     normalised_tracking=dict.fromkeys(entry["normalised_tracking"]),
                     mean_achieved=[None] * 3, std_achieved=[None] * 3)
    assert entry_problems("r", _edited(fell_at_once)) == []


def test_an_older_record_without_steps_has_its_samples_not_compared():
    record = _edited(lambda e: e.update(samples=8 * 951))
    del record["protocol"]["steps"], record["protocol"]["settle_steps"]
    assert entry_problems("r", record) == []


def test_every_committed_evaluation_passes():
    paths = sorted((REPO / "results").glob("*/eval/*.json"))
    assert paths
    found = {str(p.relative_to(REPO)): entry_problems(p.name, json.loads(p.read_text())) for p in paths}
    assert found == dict.fromkeys(found, [])


@pytest.mark.parametrize("seed", [0, 1])
def test_evaluates_own_scores_of_a_rollout_pass(seed):
    """tracking_errors (evaluate's) on samples counted as the rollout counts them: each env
    scored from settle_steps until the step it falls at, if it falls."""
    import numpy as np

    from sacscale.eval.evaluate import tracking_errors

    steps, settle, names, envs = 30, 5, ["a", "b", "c"], 4
    rng = np.random.default_rng(seed)
    group = np.repeat(np.arange(len(names)), envs)
    falls_at = np.where(rng.random(group.size) < 0.5, rng.integers(0, steps, group.size), steps)
    falls_at[group == 2] = rng.integers(0, settle - 1, envs)  # fell before scoring: no sample
    k = np.arange(steps)[:, None]
    measured = (k < falls_at) & (k + 1 >= settle)
    scores = tracking_errors(names, group, rng.uniform(-0.5, 0.5, (group.size, 3)),
                             rng.normal(0, 0.5, (steps, group.size, 4)), measured, falls_at < steps)
    record = json.loads(json.dumps({"protocol": {"steps": steps, "settle_steps": settle}, **scores}).replace(
        "NaN", "null"))
    assert record["per_command"]["c"]["samples"] == 0
    assert entry_problems("r", record) == []


def _counts_dropped_and_none_fell(record):
    """Every entry's samples removed and every fall rate 0, the overall's too (its samples
    kept): pooling and each entry's bound have nothing left to compare."""
    _none_fell(record)
    for scores in record["per_command"].values():
        del scores["samples"]


def test_entries_without_their_counts_are_named_in_a_set_of_this_format(tmp_path):
    root = copy_committed_set(tmp_path, SET)
    edit_record(root, EVAL, _counts_dropped_and_none_fell)
    remake_manifest(root)
    records = verify(root, report_pending=True).records
    absent = "absent, but this code writes it (a set made by this code, evidence format 2)"
    assert f"{EVAL}: per_command.forward_0.5.samples: {absent}" in records, records
    assert f"{EVAL}: per_command.stand.samples: {absent}" in records, records
    assert (f"{EVAL}: overall.samples 1287, but of its 88 episodes (fall_rate 0.0) 88 did not fall, scored at all "
            f"{_STEPS} each: exactly 83688") in records, records


@pytest.mark.parametrize("field", ["samples", "episodes", "fall_rate"])
def test_each_count_of_an_entry_is_required(tmp_path, field):
    root = copy_committed_set(tmp_path, SET)
    edit_record(root, EVAL, lambda record: record["per_command"]["turn_left_0.6"].pop(field))
    remake_manifest(root)
    records = verify(root, report_pending=True).records
    assert any(p.startswith(f"{EVAL}: per_command.turn_left_0.6.{field}: absent, but this code writes it")
               for p in records), records


def test_the_overall_is_held_to_the_bound_of_its_episodes():
    """88 episodes that all fell may have 5 scored steps; 88 that stood, exactly 88 x 951."""
    record = copy.deepcopy(_record())
    record["overall"]["samples"] = 5
    assert not [p for p in entry_problems("r", record) if p.startswith("r: overall.")]
    _none_fell(record)
    assert (f"r: overall.samples 5, but of its 88 episodes (fall_rate 0.0) 88 did not fall, scored at all {_STEPS} "
            "each: exactly 83688") in entry_problems("r", record)


def test_an_older_record_without_entry_counts_is_not_compared():
    """Records of older code lack them: named only in a set of this code's format."""
    record = copy.deepcopy(_record())
    for scores in record["per_command"].values():
        del scores["samples"]
    assert entry_problems("r", record) == []
