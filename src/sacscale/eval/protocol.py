"""The evaluation protocol's fixed parts, without MuJoCo or torch: the command grid, the task
settings evaluate overrides, its defaults for the flags the pipeline does not pass, and the
words it records. sacscale.eval.evaluate runs with them; verify compares a record's
`protocol` with them (sacscale.evidence.eval_protocol)."""

from __future__ import annotations

# name -> (vx, vy, wz) in the heading frame (x forward, y left, wz counter-clockwise).
# All inside the training ranges; planar norm 0 or > the 0.2 dead zone (else the task
# would have trained on it as "stand").
COMMAND_GRID: dict[str, tuple[float, float, float]] = {
    "stand": (0.0, 0.0, 0.0),
    "forward_0.5": (0.5, 0.0, 0.0),
    "forward_1.0": (1.0, 0.0, 0.0),
    "backward_0.5": (-0.5, 0.0, 0.0),
    "left_0.3": (0.0, 0.3, 0.0),
    "right_0.3": (0.0, -0.3, 0.0),
    "turn_left_0.6": (0.0, 0.0, 0.6),
    "turn_right_0.6": (0.0, 0.0, -0.6),
    "forward_turn_left": (0.5, 0.0, 0.5),
    "forward_left_turn_right": (0.5, 0.2, -0.4),
    "back_right_turn_left": (-0.4, -0.3, 0.3),
}

# no observation noise, nominal PD gains: the task settings evaluate runs with
TASK_SETTINGS = {"noise_joint_pos": 0.0, "noise_joint_vel": 0.0, "kp_range": (1.0, 1.0), "kd_range": (1.0, 1.0)}
# one torch thread: the actor's numbers then do not depend on the machine's core count
TORCH_THREADS = 1
# the defaults of the flags the pipeline's evaluate rule leaves out (--seed, --noise-scale)
SEED = 0
NOISE_SCALE = 0.0  # deterministic actions, tanh(mean)

VELOCITY = ("pelvis free joint: (vx, vy) in the heading frame; yaw_rate: torso IMU gyro z "
            "(the task's tracked quantity); yaw_rate_pelvis: the pelvis's world yaw rate")
FALLS = "terminated (tilt, height or failed sim) once per episode; later steps not scored"


def grid_as_recorded() -> dict[str, list[float]]:
    """The grid as a record's `protocol.commands` holds it."""
    return {name: list(command) for name, command in COMMAND_GRID.items()}
