"""What a robot that stands still scores on the evaluation's commands, in closed form, without
MuJoCo or torch. sacscale.eval.evaluate scores it by running its error function on zero
velocities (no falls, every step after settling counted): each error is then the command
itself, the same at every counted step. Verify derives a record's `baseline_stand_still`
from its protocol with this (sacscale.evidence.eval_stand_still); a test holds the two
together."""

from __future__ import annotations

import math

import numpy as np

from sacscale.task.walk_rules import TaskConfig, tracking_kernel


def counted_steps(steps: int, settle_steps: int) -> int:
    """The steps k (1-based) of an episode that are scored: k >= settle_steps."""
    return max(0, steps - max(settle_steps, 1) + 1)


def _kernel(sq_err: float) -> float:
    return float(tracking_kernel(np.float64(sq_err), TaskConfig()))


def stand_still_scores(command: list[float], episodes: int, steps: int, settle_steps: int) -> dict:
    """The per-command scores of `episodes` robots standing still under `command` (vx, vy, wz)."""
    vx, vy, wz = (float(c) for c in command)
    planar, yaw = vx * vx + vy * vy, wz * wz
    samples = episodes * counted_steps(steps, settle_steps)
    counted = samples > 0
    return {
        "command": [vx, vy, wz],
        "normalised_tracking": {"lin_vel_xy": _kernel(planar) if counted else math.nan,
                                "yaw_rate": _kernel(yaw) if counted else math.nan},
        "rms_error": {"lin_vel_xy": math.sqrt(planar) if counted else math.nan,
                      "yaw_rate": abs(wz) if counted else math.nan,
                      "yaw_rate_pelvis": abs(wz) if counted else math.nan},
        "fall_rate": 0.0,
        "episodes": episodes,
        "samples": samples,
        "mean_achieved": [0.0, 0.0, 0.0] if counted else [math.nan] * 3,
        "std_achieved": [0.0, 0.0, 0.0] if counted else [math.nan] * 3,
    }


def stand_still_per_command(commands: dict[str, list[float]], envs_per_command: int, steps: int,
                            settle_steps: int) -> dict[str, dict]:
    """`baseline_stand_still.per_command` of a protocol."""
    return {name: stand_still_scores(command, envs_per_command, steps, settle_steps)
            for name, command in commands.items()}
