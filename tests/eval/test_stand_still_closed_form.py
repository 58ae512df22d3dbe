"""What a robot standing still scores, in closed form (sacscale.eval.stand_still, the function
verify derives a record's baseline with), is what evaluate computes by running its error
function on zero velocities; and the ratios evaluate writes are sacscale.eval.pooling's."""

import numpy as np
import pytest

from sacscale.eval.evaluate import tracking_errors
from sacscale.eval.pooling import ratios
from sacscale.eval.protocol import COMMAND_GRID
from sacscale.eval.stand_still import counted_steps, stand_still_per_command
from sacscale.evidence.result import deep_differences


@pytest.mark.parametrize("envs, steps, settle_steps", [(8, 1000, 50), (1, 100, 50), (2, 30, 0), (3, 30, 1)])
def test_evaluates_stand_still_scores_are_the_closed_form(envs, steps, settle_steps):
    names = list(COMMAND_GRID)
    group = np.repeat(np.arange(len(names)), envs)
    commands = np.array([COMMAND_GRID[k] for k in names])[group]
    # as evaluate scores the robot that stands still: zero velocity, no falls, every step after settling
    mask = np.broadcast_to((np.arange(steps) + 1 >= settle_steps)[:, None], (steps, len(group)))
    baseline = tracking_errors(names, group, commands, np.zeros((steps, len(group), 4)), mask,
                               np.zeros(len(group), dtype=bool))
    closed = stand_still_per_command({k: list(v) for k, v in COMMAND_GRID.items()}, envs, steps, settle_steps)
    assert list(closed) == list(baseline["per_command"])
    for name, scores in baseline["per_command"].items():
        assert deep_differences(closed[name], scores, name) == ([], [])
    assert counted_steps(steps, settle_steps) * envs == baseline["per_command"]["stand"]["samples"]


def test_a_ratio_is_none_where_standing_still_makes_no_error():
    policy = {"rms_error": {"lin_vel_xy": 0.2, "yaw_rate": float("nan")}}
    still = {"rms_error": {"lin_vel_xy": 0.0, "yaw_rate": 0.5}}
    assert ratios(policy, still) == {"lin_vel_xy": None, "yaw_rate": None}
    assert ratios({"rms_error": {"x": 0.25}}, {"rms_error": {"x": 0.5}}) == {"x": 0.5}
