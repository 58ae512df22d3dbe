"""An evaluation's `overall` is its per-command scores pooled (sacscale.eval.pooling), the
function verify derives it with: the same numbers evaluate computes from every sample."""

import math

import numpy as np
import pytest

from sacscale.eval.evaluate import tracking_errors
from sacscale.eval.pooling import pooled_overall


def _nan_is_none(value):
    if isinstance(value, dict):
        return {k: _nan_is_none(v) for k, v in value.items()}
    return None if isinstance(value, float) and math.isnan(value) else value


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_evaluates_overall_is_its_per_command_scores_pooled(seed):
    rng = np.random.default_rng(seed)
    names, envs = ["a", "b", "c"], 4
    group = np.repeat(np.arange(len(names)), envs)
    commands = rng.uniform(-0.5, 0.5, (len(names), 3))[group]
    achieved = rng.normal(0, 0.5, (30, len(group), 4))
    measured = rng.random((30, len(group))) < 0.7
    measured[:, group == 2] = False  # a command none of whose envs was ever counted (nan scores)
    fell = rng.random(len(group)) < 0.4
    scores = tracking_errors(names, group, commands, achieved, measured, fell)
    pooled = pooled_overall(scores["per_command"])
    assert set(pooled) == set(scores["overall"])
    for key, value in scores["overall"].items():
        assert _nan_is_none(pooled[key]) == pytest.approx(_nan_is_none(value), rel=1e-12), key


def test_groups_without_samples_weigh_nothing():
    parts = {"a": {"rms_error": {"x": 2.0}, "fall_rate": 1.0, "episodes": 2, "samples": 0},
             "b": {"rms_error": {"x": 3.0}, "fall_rate": 0.0, "episodes": 6, "samples": 4}}
    assert pooled_overall(parts) == {"rms_error": {"x": 3.0}, "fall_rate": 0.25, "episodes": 8, "samples": 4}
