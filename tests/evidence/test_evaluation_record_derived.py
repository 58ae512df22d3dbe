"""verify derives what an evaluation record (eval/<run>.json) states beyond its own scores:
its env steps and observation from its run's train_meta.json, its protocol from the code
(command grid, control step, task settings) and the pipeline (evaluate's defaults for the
flags the rule leaves out, one seconds for the whole set), its stand-still reference from
its protocol and its ratios from its rms errors. Each edited alone, hashed again, is named."""

import json

import pytest
from set_copies import copy_committed_set, edit_record as _edit, remake_manifest, REPO

from sacscale.evidence.eval_protocol import protocol_problems
from sacscale.evidence.eval_run import run_findings
from sacscale.evidence.eval_stand_still import stand_still_problems
from sacscale.evidence.verify import verify

SET = "h200x1_shared_short"
EVAL = "eval/shared_r1_n1_pool7.json"


def _protocol(**fields):
    return lambda r: r["protocol"].update(fields)


def _halved_seconds(record):
    record["protocol"].update(seconds=10.0, steps=500)
    for scores in record["baseline_stand_still"]["per_command"].values():
        scores["samples"] = 8 * 451
    record["baseline_stand_still"]["overall"]["samples"] = 88 * 451


def _standing_still_tracks_well(record):
    """Every command's stand-still tracking raised alike, and its pooled overall with them."""
    baseline = record["baseline_stand_still"]
    for scores in baseline["per_command"].values():
        scores["normalised_tracking"]["lin_vel_xy"] = 0.9
    baseline["overall"]["normalised_tracking"]["lin_vel_xy"] = 0.9


def _grid_moved(record):
    record["protocol"]["commands"]["forward_1.0"] = [1.5, 0.0, 0.0]


def _grid_renamed(record):
    """A command renamed, in the protocol and in the scores, the policy's and the stand-still robot's."""
    for part in (record["protocol"]["commands"], record["per_command"], record["baseline_stand_still"]["per_command"]):
        renamed = {("forward_2.0" if k == "forward_1.0" else k): v for k, v in part.items()}
        part.clear()
        part.update(renamed)


def _better_ratio(record):
    record["ratio_to_stand_still"]["lin_vel_xy"] = 0.5


def _better_command_ratio(record):
    record["per_command"]["forward_0.5"]["ratio_to_stand_still"]["lin_vel_xy"] = 0.5


def _other_command(record):
    record["per_command"]["left_0.3"]["command"] = [0.0, 0.6, 0.0]


@pytest.mark.parametrize("edit, says", [
    (lambda r: r.update(env_steps=2_048_000),
     f"{EVAL}: env_steps 2048000, but the run's train_meta.json rank0_env_steps is 614400: its final policy's count"),
    (_protocol(tilt_obs="torso"),
     f"{EVAL}: protocol.tilt_obs 'torso', but the run trained with train_meta.json config.tilt_obs 'world'"),
    (_grid_moved, f"{EVAL}: protocol.commands.forward_1.0 [1.5, 0.0, 0.0], the code's command grid "
                  "(sacscale.eval.protocol.COMMAND_GRID) gives [1.0, 0.0, 0.0]"),
    (_grid_renamed, f"{EVAL}: protocol.commands names ['stand', 'forward_0.5', 'forward_2.0', "),
    (_protocol(seconds=10.0), f"{EVAL}: protocol.steps 1000, but seconds 10 at control_dt 0.02 gives 500"),
    (_halved_seconds, "eval: protocol.seconds 10.0 in shared_r1_n1_pool7.json; 20.0 in shared_r1_n2_shared.json, "
                      "shared_r2_n1_pool7.json, shared_r2_n2_shared.json: the pipeline evaluates every run of a set "
                      "with the same --seconds (workflow/rules/common.smk eval_args)"),
    (_protocol(settle_s=2.0, settle_steps=100),
     f"{EVAL}: protocol.settle_s 2.0, but the pipeline's evaluate rule passes no --settle-s, so evaluate's "
     "default 1.0"),
    (_protocol(seed=7), f"{EVAL}: protocol.seed 7, but the pipeline's evaluate rule passes no --seed, so evaluate's "
                        "default 0"),
    (_protocol(control_dt=0.01), f"{EVAL}: protocol.control_dt 0.01, the code's is 0.02"),
    (_protocol(kp_range=[0.8, 1.2]), f"{EVAL}: protocol.kp_range [0.8, 1.2], the code's is [1.0, 1.0]"),
    (_protocol(torch_threads=16), f"{EVAL}: protocol.torch_threads 16, the code's is 1"),
    (_better_ratio, f"{EVAL}: ratio_to_stand_still.lin_vel_xy: stored 0.5, overall.rms_error over the stand-still one "
                    "gives 2.50792211561636"),
    (_better_command_ratio, f"{EVAL}: per_command.forward_0.5.ratio_to_stand_still.lin_vel_xy: stored 0.5, "
                            "per_command.forward_0.5.rms_error over the stand-still one gives 2.898440686105"),
    (_standing_still_tracks_well, f"{EVAL}: baseline_stand_still.per_command.forward_0.5.normalised_tracking."
                                  "lin_vel_xy: stored 0.9, a robot standing still on protocol.commands gives "
                                  "0.36787944117144233"),
    (_other_command, f"{EVAL}: per_command.left_0.3.command [0.0, 0.6, 0.0], protocol.commands.left_0.3 is "
                     "[0.0, 0.3, 0.0]"),
])
def test_an_evaluation_states_only_what_its_sources_give(tmp_path, edit, says):
    root = copy_committed_set(tmp_path, SET)
    _edit(root, EVAL, edit)
    remake_manifest(root)
    records = verify(root, report_pending=True).records
    assert any(p.startswith(says) for p in records), records


def test_the_committed_set_verifies_with_these_checks():
    assert verify(REPO / "results" / SET, report_pending=True).records == []


def test_an_interrupted_runs_steps_are_said_not_compared():
    """Its last checkpoint, the policy evaluated, may precede its last step."""
    found = run_findings("eval/x.json", {"env_steps": 5}, {"status": "interrupted"})
    assert (found.problems, found.unrecorded) == ([], [])
    assert found.notes == ["eval/x.json: env_steps not compared with train_meta.json rank0_env_steps: the run's status "
                           "is 'interrupted', not 'completed'"]


@pytest.mark.parametrize("fields, says", [
    ({"seconds": 1e308}, "r: protocol.seconds 1e+308, settle_s 1.0: not numbers of seconds evaluate takes"),
    ({"seconds": "20"}, "r: protocol.seconds '20', settle_s 1.0: not numbers of seconds evaluate takes"),
    ({"envs_per_command": [0] * 3}, "r: protocol envs_per_command, steps and settle_steps [[0, 0, 0], 1000, 50]: not "
                                    "the counts evaluate records, so baseline_stand_still cannot be derived from them"),
])
def test_a_protocol_of_the_wrong_shape_is_one_line(fields, says):
    record = json.loads((REPO / "results" / SET / EVAL).read_text())
    record["protocol"].update(fields)
    assert says in protocol_problems("r", record, pipeline=True) + stand_still_problems("r", record)
