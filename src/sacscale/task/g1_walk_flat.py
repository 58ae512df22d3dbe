"""G1WalkFlat: velocity-tracking walking of the Unitree G1 on flat ground, vectorised.

All environments live in ONE `mujoco.batch.Batch`; a control step is one `Batch.step`
call of N_SUBSTEPS substeps (the GIL is released while the thread pool runs). Everything
else (observations, rewards, terminations, resets) is numpy over the env axis; there is
no per-environment Python loop. The authority for every value and rule is the public
reference task, UniLab 1.5.2's `g1_walk_flat` (see docs/deviations.md for what differs
and tests/reference/ for the differential tests against it).

A step can be split in two: `start_step` hands the physics to the env's own physics
thread and returns, `finish_step` waits for it and does the task work. `EnvHalves`
(sacscale.task.halves) uses that to run one half's task and actor work while the other
half's physics occupies the pool.

The task's rules apart from the simulation (its configuration, penalty curriculum,
command distribution and reward kernels) are in sacscale.task.walk_rules.

Derived quantities (the sensors: torso gyro and up-vector, pelvis velocity, foot poses)
follow `mj_step` semantics: after a step they describe the state at the start of the
last substep (6.7 ms earlier), as in a plain `mj_step` loop; computing them at the new
state would cost an extra position/velocity pass per control step (about 5 % more
physics). Joint positions and velocities and the pelvis height are the current state.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
from mujoco.batch import Batch, SimulationError

from sacscale.cpus import pinned_thread
from sacscale.mujoco_lib import mujoco
from sacscale.task import g1_model as g1
from sacscale.task.terms import REWARD_TERMS
from sacscale.task.walk_rules import (ACTION_DIM, ACTOR_OBS_DIM, CRITIC_OBS_DIM, TILT_OBS, PenaltyCurriculum,
                                      TaskConfig, sample_commands, swing_height_target, tracking_kernel)

_STAGE_NONE = mujoco.mjtStage.mjSTAGE_NONE.value
_STAGE_VEL = mujoco.mjtStage.mjSTAGE_VEL.value
# MuJoCo's own instability checks: on these it resets the simulation to qpos0 itself
_UNSTABLE_WARNINGS = np.array(
    [
        int(mujoco.mjtWarning.mjWARN_BADQPOS),
        int(mujoco.mjtWarning.mjWARN_BADQVEL),
        int(mujoco.mjtWarning.mjWARN_BADQACC),
    ]
)


@dataclass
class StepOutput:
    """One control step of all envs; arrays are fresh each step (the env keeps no alias)."""

    actor_obs: np.ndarray  # (N, 98) f32, for the next action: after auto-reset
    critic_obs: np.ndarray  # (N, 101) f32, likewise
    next_actor_obs: np.ndarray  # (N, 98) f32, the state this step reached, before reset
    next_critic_obs: np.ndarray  # (N, 101) f32
    reward: np.ndarray  # (N,) f32
    terminated: np.ndarray  # (N,) bool: fell (or the simulation failed); no bootstrap
    truncated: np.ndarray  # (N,) bool: time-out, bootstrap through it
    info: dict = field(default_factory=dict)


class G1WalkFlat:
    """num_envs G1 walking tasks on one mujoco.batch.Batch of num_threads threads."""

    ACTOR_OBS_DIM = ACTOR_OBS_DIM
    CRITIC_OBS_DIM = CRITIC_OBS_DIM
    ACTION_DIM = ACTION_DIM

    def __init__(
        self,
        model: mujoco.MjModel,
        num_envs: int,
        num_threads: int,
        seed: int,
        cpu_ids=None,
        *,
        config: TaskConfig | None = None,
        curriculum: PenaltyCurriculum | None = None,
    ):
        if model.nu != self.ACTION_DIM or model.nq != 36 or model.nv != 35:
            raise ValueError(f"not the G1 task model: nq={model.nq} nv={model.nv} nu={model.nu}")
        self.model = model
        self.num_envs = int(num_envs)
        self.num_threads = int(num_threads)
        self.cfg = config or TaskConfig()
        self.cpu_ids = cpu_ids
        self.rng = np.random.default_rng(seed)
        cfg, n = self.cfg, self.num_envs

        # The batch's worker threads inherit the creating thread's mask: pin, create, restore.
        with pinned_thread(cpu_ids) as pinned:
            self.batch = Batch(model, n, self.num_threads)
        # The thread that calls Batch.step is one of the batch's workers, so it is pinned
        # to the pool as well; it is the env's own, so that the caller can work meanwhile.
        self._physics = ThreadPoolExecutor(
            1, thread_name_prefix="physics", initializer=os.sched_setaffinity if pinned else None,
            initargs=(0, pinned) if pinned else (),
        )
        self._inflight: Future | None = None  # the physics of the started step
        self._started: tuple | None = None  # (clipped actions, seconds in start_step) until finish_step
        self._physics_result: tuple | None = None  # (seconds, failed sim ids or None)
        self._wait_s = 0.0

        # Live views (state rows; writes take effect at the next call) and outputs.
        self._qpos = self.batch.bind("qpos")
        self._qvel = self.batch.bind("qvel")
        self._ctrl = self.batch.bind("ctrl")
        self._sens = self.batch.bind("sensordata")
        if self.cfg.tilt_obs not in TILT_OBS:
            raise ValueError(f"tilt_obs must be one of {TILT_OBS}, got {self.cfg.tilt_obs!r}")
        # the torso IMU's orientation, row-major; computed with the sensors (mj_step timing)
        self._torso_xmat = self.batch.bind("site_xmat")[:, model.site("imu_in_torso").id]
        # per-simulation gains for kp/kd randomisation
        self._gain = self.batch.expand("actuator_gainprm")
        self._bias = self.batch.expand("actuator_biasprm")

        names = [model.actuator(i).name for i in range(model.nu)]
        if tuple(names) != g1.JOINT_NAMES:
            raise ValueError("actuators are not in the task's joint order")
        qadr = np.array([model.jnt_qposadr[model.joint(j).id] for j in g1.JOINT_NAMES])
        vadr = np.array([model.jnt_dofadr[model.joint(j).id] for j in g1.JOINT_NAMES])
        # hinge joints follow the free joint in order, so plain slices (views, no copies)
        if not ((qadr == np.arange(7, 36)).all() and (vadr == np.arange(6, 35)).all()):
            raise ValueError("the actuated joints must follow the free joint in action order")
        self._jq, self._jv = slice(7, 36), slice(6, 35)

        self._sadr = {}
        for name, dim in g1.SENSORS:
            adr = int(model.sensor(name).adr[0])
            self._sadr[name] = slice(adr, adr + dim)

        self._key = model.key(g1.KEYFRAME).id
        self._q0 = model.key_qpos[self._key, 7:36].copy()
        self._kp0 = model.actuator_gainprm[:, 0].copy()
        self._kv0 = -model.actuator_biasprm[:, 2].copy()
        self._pose_w = np.array(
            list(cfg.pose_weights_leg) * 2 + [cfg.pose_weight_upper] * 17, dtype=np.float64
        )
        self._w = np.array([cfg.reward_weights[t] for t in REWARD_TERMS])
        self._negative = self._w < 0
        self._cos_max_tilt = np.cos(np.deg2rad(cfg.max_tilt_deg))
        self._dphase = 2.0 * np.pi * cfg.gait_frequency * g1.CONTROL_DT

        # Per-env task state.
        self.commands = np.zeros((n, 3))
        # (N, 3) commands that resets assign instead of sampling (evaluation); None: sample
        self.command_override: np.ndarray | None = None
        # gait phase of the left and right foot, radians in [0, 2pi) after each step; a reset
        # draws left ~ U(0, 2pi) and sets right = left + pi (wrapped at the next step)
        self.phase = np.zeros((n, 2))
        self.last_action = np.zeros((n, self.ACTION_DIM))
        self.kp_scale = np.ones((n, self.ACTION_DIM))  # per env and actuator
        self.kd_scale = np.ones((n, self.ACTION_DIM))
        self.timeout_counter = np.zeros(n, dtype=np.int64)  # staggered: time-outs spread out
        self.episode_length = np.zeros(n, dtype=np.int64)  # true steps since the last reset
        self.episode_return = np.zeros(n)
        self._warn_count = np.zeros((n, len(_UNSTABLE_WARNINGS)), dtype=np.int64)

        # a shared curriculum is updated by its owner (EnvHalves), once per round
        self._owns_curriculum = curriculum is None
        self.curriculum = curriculum or PenaltyCurriculum(cfg, n)

        self.total_resets = 0
        self.total_sim_errors = 0
        self.reset()

    # ------------------------------------------------------------------ public API

    def reset(self) -> tuple[np.ndarray, np.ndarray]:
        """Reset every env; time-out counters restart at random points of an episode."""
        if self._started is not None:
            raise RuntimeError("reset called between start_step and finish_step")
        ids = np.arange(self.num_envs)
        self._reset_envs(ids)
        self.timeout_counter[:] = self.rng.integers(0, self.cfg.episode_length, self.num_envs)
        return self._observe(None)

    @property
    def penalty_scale(self) -> float:
        return self.curriculum.scale

    @property
    def step_started(self) -> bool:
        """A step was started and not yet finished."""
        return self._started is not None

    def step(self, actions: np.ndarray) -> StepOutput:
        self.start_step(actions)
        return self.finish_step()

    def start_step(self, actions: np.ndarray) -> None:
        """Apply the actions and start the physics on the env's physics thread."""
        if self._started is not None:
            raise RuntimeError("start_step called twice without finish_step")
        n = self.num_envs
        actions = np.asarray(actions)
        if actions.shape != (n, self.ACTION_DIM):
            raise ValueError(f"actions must be ({n}, {self.ACTION_DIM}), got {actions.shape}")
        t0 = time.perf_counter()
        a = np.clip(actions.astype(np.float64, copy=False), -1.0, 1.0)
        if not np.isfinite(a).all():
            raise ValueError("actions contain NaN or inf")  # a learner bug: do not mask it
        self._ctrl[:] = self._q0 + self.cfg.action_scale * a
        self._wait_s = 0.0
        self._inflight = self._physics.submit(self._physics_step)
        self._started = (a, time.perf_counter() - t0)

    def wait_physics(self) -> float:
        """Block until the started step's physics is done (the pool is free again);
        returns the seconds waited."""
        if self._inflight is None:
            return 0.0
        t = time.perf_counter()
        self._physics_result = self._inflight.result()
        self._inflight = None
        waited = time.perf_counter() - t
        self._wait_s += waited
        return waited

    def finish_step(self) -> StepOutput:
        """Wait for the started step's physics, then observations, rewards and resets."""
        if self._started is None:
            raise RuntimeError("finish_step called without start_step")
        t0 = time.perf_counter()
        waited = self.wait_physics()
        (a, start_s), self._started = self._started, None
        t_phys, failed_ids = self._physics_result
        cfg, n = self.cfg, self.num_envs
        failed = np.zeros(n, dtype=bool)
        if failed_ids is not None:
            # the failed sims kept their pre-step state; the rest ran to completion
            failed[failed_ids] = True
        # MuJoCo resets a sim whose state blew up (bad qpos/qvel/qacc) and counts a warning
        warn = self.batch.warning[:, _UNSTABLE_WARNINGS, 1]
        failed |= (warn > self._warn_count).any(axis=1)
        self._warn_count[:] = warn

        self.phase = np.mod(self.phase + self._dphase, 2.0 * np.pi)
        self.episode_length += 1
        self.timeout_counter += 1

        # Reward from the state reached (a is this step's action, last_action the one before).
        terms = self._reward_terms(a)
        scale = np.where(self._negative, self.curriculum.scale, 1.0)
        weighted = terms * (self._w * scale * cfg.reward_dt_scale)  # (N, nterms)

        self.last_action[:] = a
        next_actor, next_critic = self._observe(None)
        failed |= ~np.isfinite(next_critic).all(axis=1) | ~np.isfinite(weighted).all(axis=1)
        if failed.any():
            # never hand NaN/inf to the learner, even in rows it will not bootstrap from;
            # a failed simulation's step earns nothing
            np.nan_to_num(next_actor, copy=False, nan=0.0, posinf=0.0, neginf=0.0)
            np.nan_to_num(next_critic, copy=False, nan=0.0, posinf=0.0, neginf=0.0)
            weighted[failed] = 0.0
        reward = weighted.sum(axis=1)

        tilted, low = self._fall_terms()
        terminated = tilted | low | failed
        truncated = (self.timeout_counter >= cfg.episode_length) & ~terminated
        done = terminated | truncated
        self.episode_return += reward

        info: dict = {}
        done_ids = np.flatnonzero(done)
        info["episode_return"] = self.episode_return[done_ids].astype(np.float32)
        info["episode_length"] = self.episode_length[done_ids].astype(np.float32)
        info["episode_terminated"] = terminated[done_ids]
        # per term, the mean over envs: weighted (its share of the reward, penalty scale and
        # x 0.02 included) and raw (the unweighted term, as the reference defines it)
        raw = np.where(failed[:, None], 0.0, terms)
        for k, term in enumerate(REWARD_TERMS):
            info[f"reward/{term}"] = float(weighted[:, k].mean())
            info[f"reward_raw/{term}"] = float(raw[:, k].mean())
        info["falls"] = float(np.count_nonzero(terminated & ~failed))  # fell over (not a failed sim)
        if done_ids.size:  # the counters, as the reference's curriculum reads them
            self.curriculum.record(self.timeout_counter[done_ids])
        if self._owns_curriculum:
            self.curriculum.update()
        info["curriculum/penalty_scale"] = self.curriculum.scale
        n_failed = int(failed.sum())
        info["sim_errors"] = float(n_failed)
        self.total_sim_errors += n_failed

        actor_obs, critic_obs = next_actor.copy(), next_critic.copy()
        if done_ids.size:
            self._reset_envs(done_ids)
            actor_obs[done_ids], critic_obs[done_ids] = self._observe(done_ids)
        info["num_resets"] = float(done_ids.size)
        # physics: the pool's time on this step; physics_wait: how long the caller was
        # blocked on it (all of it when the caller does nothing else meanwhile); task: the
        # caller's own work in start_step and finish_step
        info["time/physics_s"] = t_phys
        info["time/physics_wait_s"] = self._wait_s
        info["time/task_s"] = start_s + (time.perf_counter() - t0 - waited)
        return StepOutput(
            actor_obs=actor_obs,
            critic_obs=critic_obs,
            next_actor_obs=next_actor,
            next_critic_obs=next_critic,
            reward=reward.astype(np.float32),
            terminated=terminated,
            truncated=truncated,
            info=info,
        )

    def close(self) -> None:
        """Wait for any physics in flight, then drop the batch and the physics thread."""
        self._physics.shutdown(wait=True)
        self._inflight = None
        self.batch = None

    # ------------------------------------------------------------------ state, for evaluation and videos

    @property
    def qpos(self) -> np.ndarray:
        """(N, nq) live view of the simulations' positions, the free joint's first."""
        return self._qpos

    @property
    def qvel(self) -> np.ndarray:
        """(N, nv) live view of the simulations' velocities, the free joint's first."""
        return self._qvel

    def torso_yaw_rate(self) -> np.ndarray:
        """(N,) the torso IMU gyro's z, a copy: the yaw rate the task tracks and rewards."""
        return self._sens[:, self._sadr["torso_gyro"].start + 2].copy()

    def observe(self) -> tuple[np.ndarray, np.ndarray]:
        """(actor, critic) observations of every env now (e.g. after a command change), as
        new float32 arrays, the actor's with its configured noise."""
        return self._observe(None)

    # ------------------------------------------------------------------ internals

    def _physics_step(self) -> tuple[float, np.ndarray | None]:
        """On the physics thread: (seconds, ids of the sims that failed, or None)."""
        t = time.perf_counter()
        try:
            self.batch.step(nstep=g1.N_SUBSTEPS)
            failed = None
        except SimulationError as e:
            failed = np.asarray(e.ids)
        return time.perf_counter() - t, failed

    def _reward_terms(self, a: np.ndarray) -> np.ndarray:
        """(N, len(REWARD_TERMS)) unweighted reward terms at the current state."""
        cfg = self.cfg
        s = self._sens
        gyro = s[:, self._sadr["torso_gyro"]]
        up = s[:, self._sadr["torso_upvector"]]
        vel = s[:, self._sadr["pelvis_local_linvel"]]
        out = np.empty((self.num_envs, len(REWARD_TERMS)))
        lin_err = np.sum((self.commands[:, :2] - vel[:, :2]) ** 2, axis=1)
        out[:, 0] = tracking_kernel(lin_err, cfg)
        out[:, 1] = tracking_kernel((self.commands[:, 2] - gyro[:, 2]) ** 2, cfg)
        out[:, 2] = gyro[:, 0] ** 2 + gyro[:, 1] ** 2
        out[:, 3] = up[:, 0] ** 2 + up[:, 1] ** 2
        out[:, 4] = np.sum((a - self.last_action) ** 2, axis=1)
        dq = self._qpos[:, self._jq] - self._q0
        out[:, 5] = (dq * dq) @ self._pose_w
        ql = s[:, self._sadr["left_foot_quat"]]
        qr = s[:, self._sadr["right_foot_quat"]]
        out[:, 6] = ql[:, 1] ** 2 + ql[:, 2] ** 2 + qr[:, 1] ** 2 + qr[:, 2] ** 2
        target_l = swing_height_target(self.phase[:, 0], cfg.swing_height)
        target_r = swing_height_target(self.phase[:, 1], cfg.swing_height)
        el = s[:, self._sadr["left_foot_pos"]][:, 2] - target_l
        er = s[:, self._sadr["right_foot_pos"]][:, 2] - target_r
        out[:, 7] = np.exp(-(el * el + er * er) / cfg.feet_phase_sigma)
        out[:, 8] = 1.0
        return out

    def _fall_terms(self) -> tuple[np.ndarray, np.ndarray]:
        """(tilted past max_tilt_deg, pelvis below min_pelvis_height) per env, now."""
        up_z = self._sens[:, self._sadr["torso_upvector"]][:, 2]
        return up_z < self._cos_max_tilt, self._qpos[:, 2] < self.cfg.min_pelvis_height

    def _observe(self, ids: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """(actor, critic) observations of envs ids (None: all), as new float32 arrays."""
        cfg = self.cfg
        sel = slice(None) if ids is None else ids
        m = self.num_envs if ids is None else len(ids)
        s = self._sens[sel]
        critic = np.empty((m, self.CRITIC_OBS_DIM), dtype=np.float32)
        critic[:, 0:3] = s[:, self._sadr["torso_gyro"]] * cfg.gyro_scale
        if cfg.tilt_obs == "world":
            critic[:, 3:6] = -s[:, self._sadr["torso_upvector"]]
        else:  # R^T (0, 0, -1): minus the last row of the site's rotation matrix
            critic[:, 3:6] = -self._torso_xmat[sel, 6:9]
        dq = self._qpos[sel, self._jq] - self._q0
        qd = self._qvel[sel, self._jv]
        critic[:, 6:35] = dq
        critic[:, 35:64] = qd * cfg.joint_vel_scale
        critic[:, 64:93] = self.last_action[sel]
        critic[:, 93:96] = self.commands[sel]
        critic[:, 96:98] = self.phase[sel]
        critic[:, 98:101] = s[:, self._sadr["pelvis_local_linvel"]] * cfg.critic_linvel_scale

        actor = critic[:, : self.ACTOR_OBS_DIM].copy()
        noise = self.rng.uniform(-1.0, 1.0, size=(m, 2, self.ACTION_DIM))
        actor[:, 6:35] = dq + noise[:, 0] * cfg.noise_joint_pos
        actor[:, 35:64] = (qd + noise[:, 1] * cfg.noise_joint_vel) * cfg.joint_vel_scale
        return actor, critic

    def _sample_commands(self, k: int) -> np.ndarray:
        return sample_commands(self.cfg, self.rng, k)

    def _reset_envs(self, ids: np.ndarray) -> None:
        """Keyframe + random xy, yaw, base velocity, command and gains for envs ids."""
        cfg, k = self.cfg, len(ids)
        self.batch.reset(ids, keyframe=self._key, stage=_STAGE_NONE)
        qpos, qvel = self._qpos, self._qvel
        qpos[ids, 0:2] += self.rng.uniform(-cfg.reset_xy, cfg.reset_xy, size=(k, 2))
        yaw = self.rng.uniform(-np.pi, np.pi, size=k)
        # the keyframe's base orientation is the identity, so the new one is a pure yaw
        qpos[ids, 3:7] = np.stack([np.cos(yaw / 2), np.zeros(k), np.zeros(k), np.sin(yaw / 2)], axis=1)
        # base velocity U(+-0.5) per axis in the world frame, as the reference samples it;
        # MuJoCo's free joint takes the linear part in world and the angular part in body
        # coordinates, so the angular sample is rotated by the inverse yaw
        vel = self.rng.uniform(-cfg.reset_base_vel, cfg.reset_base_vel, size=(k, 6))
        c, s_ = np.cos(yaw), np.sin(yaw)
        wx, wy = vel[:, 3].copy(), vel[:, 4].copy()
        vel[:, 3], vel[:, 4] = c * wx + s_ * wy, -s_ * wx + c * wy
        qvel[ids, 0:6] = vel
        if self.command_override is None:
            self.commands[ids] = self._sample_commands(k)
        else:
            self.commands[ids] = self.command_override[ids]

        # an independent scale per actuator, as the reference's pd_gains event
        kp_s = self.rng.uniform(*cfg.kp_range, size=(k, self.ACTION_DIM))
        kd_s = self.rng.uniform(*cfg.kd_range, size=(k, self.ACTION_DIM))
        self.kp_scale[ids], self.kd_scale[ids] = kp_s, kd_s
        kp = self._kp0 * kp_s
        self._gain[ids, :, 0] = kp
        self._bias[ids, :, 1] = -kp
        self._bias[ids, :, 2] = -self._kv0 * kd_s

        self.last_action[ids] = 0.0
        left = self.rng.uniform(0.0, 2.0 * np.pi, size=k)
        self.phase[ids] = np.stack([left, left + np.pi], axis=1)
        self.timeout_counter[ids] = 0
        self.episode_length[ids] = 0
        self.episode_return[ids] = 0.0
        self.total_resets += k
        # sensors of the new state, for the first observation
        self.batch.forward(ids, stage=_STAGE_VEL)
        self._warn_count[ids] = self.batch.warning[ids][:, _UNSTABLE_WARNINGS, 1]
