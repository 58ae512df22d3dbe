"""A recomputed NaN is what a record stores as null: records are JSON, which holds no NaN,
and their writer stores null for it. An evaluation of a policy that fell before any sample
was counted (a few iterations of training) pools every group's NaN to NaN, stored null."""

import math

from sacscale.evidence.eval_record import evaluation_problems
from sacscale.evidence.result import deep_differences


def _fell_at_once(command: str) -> dict:
    return {"episodes": 8, "samples": 0, "fall_rate": 1.0,
            "rms_error": {"lin_vel_xy": None, "yaw_rate": None},
            "normalised_tracking": {"lin_vel_xy": None, "yaw_rate": None}}


def test_a_recomputed_nan_stored_as_null_agrees():
    assert deep_differences({"a": None, "b": [None]}, {"a": math.nan, "b": [math.inf]}) == ([], [])


def test_a_stored_null_where_a_number_is_derived_is_named():
    problems, _ = deep_differences({"a": None}, {"a": 0.25})
    assert problems == ["a: stored null, recomputed 0.25"]


def test_a_stored_number_where_nan_is_derived_is_named():
    problems, _ = deep_differences({"a": 0.25}, {"a": math.nan})
    assert problems == ["a: stored 0.25, recomputed nan"]


def test_an_evaluation_with_no_counted_sample_pools_to_null():
    per_command = {name: _fell_at_once(name) for name in ("stand", "forward_0.5")}
    overall = {"episodes": 16, "samples": 0, "fall_rate": 1.0,
               "rms_error": {"lin_vel_xy": None, "yaw_rate": None},
               "normalised_tracking": {"lin_vel_xy": None, "yaw_rate": None}}
    record = {"protocol": {}, "per_command": per_command, "overall": overall}
    assert evaluation_problems("eval/r.json", record) == []
    overall["rms_error"]["yaw_rate"] = 0.1
    assert evaluation_problems("eval/r.json", record) == [
        "eval/r.json: overall.rms_error.yaw_rate: stored 0.1, its per_command entries give nan"]
