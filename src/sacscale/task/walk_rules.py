"""The rules of the G1 walking task that hold apart from its simulation: the reference
values (TaskConfig), the penalty curriculum, the velocity-command distribution and the
reward kernels. sacscale.task.g1_walk_flat runs them on MuJoCo; the analysis uses the
tracking maxima and the stand-still baseline without a simulation."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

# the task's interface: observation sizes (actor, critic) and actions (one per actuated joint)
ACTOR_OBS_DIM = 98
CRITIC_OBS_DIM = 101
ACTION_DIM = 29

TILT_OBS = ("world", "torso")
# the collector orders of sacscale.task.halves: named here, where the trainer's checks read them without MuJoCo
PIPELINES = ("halves", "serial")
# the policy's step (s): sacscale.task.g1_model's, named here for the checks that run without MuJoCo
CONTROL_DT = 0.02



@dataclass(frozen=True)
class TaskConfig:
    """Reference values of the task; one name per knob."""

    episode_length: int = 1000  # control steps (20 s)
    action_scale: float = 1.0
    gait_frequency: float = 1.5  # Hz
    swing_height: float = 0.09  # m, apex of the foot-height target
    # observation scales and noise (uniform in [-1, 1] x scale)
    # tilt input (obs 3:6): "world", the reference's: minus the torso IMU's z-axis in the
    # world frame (it depends on the heading, which is random and not observed); "torso":
    # gravity's direction in the torso IMU frame (heading-free), a named option
    tilt_obs: str = "world"
    gyro_scale: float = 0.25
    joint_vel_scale: float = 0.05
    critic_linvel_scale: float = 2.0
    noise_joint_pos: float = 0.01
    noise_joint_vel: float = 0.1  # applied before joint_vel_scale
    # rewards
    reward_weights: dict = field(
        default_factory=lambda: {
            "tracking_lin_vel": 2.0,
            "tracking_ang_vel": 1.5,
            "ang_vel_xy": -1.0,
            "orientation": -10.0,
            "action_rate": -4.0,
            "pose": -0.5,
            "feet_orientation": -20.0,
            "feet_phase": 5.0,
            "alive": 10.0,
        }
    )
    reward_dt_scale: float = 0.02
    tracking_sigma: float = 0.25
    feet_phase_sigma: float = 0.04
    pose_weights_leg: tuple = (0.01, 1.0, 5.0, 0.01, 5.0, 5.0)
    pose_weight_upper: float = 50.0  # waist and arms
    # penalty curriculum: the reference's collector-effective 1/16 -> 1/8 schedule
    penalty_scale_init: float = 0.0625
    penalty_scale_range: tuple = (0.0625, 0.125)
    penalty_scale_rate: float = 0.001
    # moving average of ended episodes' lengths: weight min(count / window, 1) per update,
    # window = max(1, int(curriculum_window_4096 * num_envs / 4096))
    curriculum_window_4096: int = 1000
    curriculum_low: float = 150.0
    curriculum_high: float = 750.0
    # termination
    max_tilt_deg: float = 65.0
    min_pelvis_height: float = 0.3
    # resets
    reset_xy: float = 0.5
    reset_base_vel: float = 0.5
    cmd_vx: tuple = (-0.6, 1.0)
    cmd_vy: tuple = (-0.4, 0.4)
    cmd_wz: tuple = (-0.8, 0.8)
    cmd_dead_zone: float = 0.2  # (vx, vy) kept only if its norm exceeds this, else zeroed
    kp_range: tuple = (0.9, 1.1)
    kd_range: tuple = (0.9, 1.1)


class PenaltyCurriculum:
    """Penalty scale driven by an exponential moving average of ended episodes' lengths.

    As the reference: each update with ended episodes moves the average toward their mean
    with weight min(count / window, 1), window = int(1000 * num_envs / 4096), then moves the
    scale down while the average is below `curriculum_low`, up while above
    `curriculum_high`. The lengths are the envs' episode-step counters, which start at
    random points of an episode (as the reference's do), so the first episodes count from
    there. `record` adds the lengths of the episodes that ended; `update`, once per step,
    applies them. A G1WalkFlat that owns its curriculum does both in each step. Several
    G1WalkFlat objects that together form one task (the halves of `EnvHalves`) share one
    instance and only record; their owner updates once per round, so the scale follows
    exactly the rule of one env of all the envs."""

    def __init__(self, cfg: TaskConfig, num_envs: int):
        self.cfg = cfg
        self.scale = cfg.penalty_scale_init
        self.window = max(1, int(cfg.curriculum_window_4096 * num_envs / 4096))
        self.mean_length = 0.0
        self._pending: list[np.ndarray] = []  # episodes ended since the last update

    def record(self, lengths: np.ndarray) -> None:
        if len(lengths):
            self._pending.append(np.asarray(lengths, dtype=np.float64))

    def update(self) -> None:
        """Once per step: fold in the ended episodes, then move the scale if any ended."""
        if not self._pending:
            return
        lengths = np.concatenate(self._pending)
        self._pending = []
        weight = min(len(lengths) / self.window, 1.0)
        self.mean_length += (float(lengths.mean()) - self.mean_length) * weight
        cfg = self.cfg
        if self.mean_length < cfg.curriculum_low:
            self.scale *= 1.0 - cfg.penalty_scale_rate
        elif self.mean_length > cfg.curriculum_high:
            self.scale *= 1.0 + cfg.penalty_scale_rate
        self.scale = float(np.clip(self.scale, *cfg.penalty_scale_range))


def tracking_kernel(sq_err: np.ndarray, cfg: TaskConfig) -> np.ndarray:
    """The velocity-tracking reward's kernel exp(-err^2 / sigma): 1 for perfect tracking."""
    return np.exp(-sq_err / cfg.tracking_sigma)


def sample_commands(cfg: TaskConfig, rng: np.random.Generator, k: int) -> np.ndarray:
    """k velocity commands (vx, vy, wz) from the task's distribution: uniform per axis, the
    planar part zeroed when its norm is inside the dead zone."""
    cmd = np.empty((k, 3))
    cmd[:, 0] = rng.uniform(*cfg.cmd_vx, size=k)
    cmd[:, 1] = rng.uniform(*cfg.cmd_vy, size=k)
    cmd[:, 2] = rng.uniform(*cfg.cmd_wz, size=k)
    still = np.hypot(cmd[:, 0], cmd[:, 1]) <= cfg.cmd_dead_zone
    cmd[still, :2] = 0.0
    return cmd


def tracking_maxima(cfg: TaskConfig | None = None) -> dict[str, float]:
    """Each tracking term's per-step maximum (perfect tracking: kernel 1), weighted and scaled."""
    cfg = cfg or TaskConfig()
    return {term: float(cfg.reward_weights[term] * cfg.reward_dt_scale)
            for term in ("tracking_lin_vel", "tracking_ang_vel")}


def stand_still_tracking(cfg: TaskConfig | None = None, samples: int = 400_000, seed: int = 0) -> dict[str, float]:
    """The weighted per-step tracking rewards (`Reward/tracking_*`) that a robot standing
    still earns on average over the command distribution (zero velocity: the errors are
    the commands), by Monte Carlo with the task's own sampling and kernel; and each term's
    maximum (perfect tracking)."""
    cfg = cfg or TaskConfig()
    cmd = sample_commands(cfg, np.random.default_rng(seed), samples)
    kernel = {"tracking_lin_vel": tracking_kernel(np.sum(cmd[:, :2] ** 2, axis=1), cfg),
              "tracking_ang_vel": tracking_kernel(cmd[:, 2] ** 2, cfg)}
    out = {}
    for term, top in tracking_maxima(cfg).items():
        out[term] = float(kernel[term].mean() * top)
        out[f"{term}_max"] = top
    return out


def swing_height_target(phase: np.ndarray, apex: float) -> np.ndarray:
    """Foot-height target over a gait cycle: a cubic Bezier up to apex and back down.

    The phase (any real angle) is wrapped to [-pi, pi) and mapped to x in [0, 1); the first
    half rises with the Bezier whose control heights are (0, 0, apex, apex), i.e.
    apex * (3s^2 - 2s^3), the second falls symmetrically. Ground level at phase pi (= -pi),
    apex at phase 0.
    """
    x = (_wrap_angle(phase) + np.pi) / (2.0 * np.pi)
    s = np.where(x <= 0.5, 2.0 * x, 2.0 - 2.0 * x)
    return apex * s * s * (3.0 - 2.0 * s)


def _wrap_angle(a: np.ndarray) -> np.ndarray:
    return np.mod(a + np.pi, 2.0 * np.pi) - np.pi
