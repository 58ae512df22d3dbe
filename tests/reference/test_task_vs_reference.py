"""G1WalkFlat's observations, reward terms, terminations, curriculum and reset draws
against the reference's own code (unilab 1.5.2's env on CPU, its term objects), driven by
tests/reference/unilab_task_worker.py in the reference's interpreter.

States are given as float32 (the reference's state writes take float32), sensors come
from a forward pass at the given state on both sides, and the reference's observation
noise is switched off with its own flag (ours: the critic's first 98 values are the
noise-free actor observation)."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from sacscale.task import g1_model as g1
from sacscale.task.g1_walk_flat import REWARD_TERMS, G1WalkFlat, PenaltyCurriculum, TaskConfig

B = 24
# our term name -> the reference's
TERM_NAMES = {
    "tracking_lin_vel": "tracking_lin_vel",
    "tracking_ang_vel": "tracking_ang_vel",
    "ang_vel_xy": "penalty_ang_vel_xy",
    "orientation": "penalty_orientation",
    "action_rate": "penalty_action_rate",
    "pose": "pose",
    "feet_orientation": "penalty_feet_ori",
    "feet_phase": "feet_phase",
    "alive": "alive",
}


def _inputs(model, n, seed=1):
    """Standing keyframe, perturbed states (some fallen, some low), commands, phases, actions."""
    rng = np.random.default_rng(seed)
    key = model.key(g1.KEYFRAME)
    qpos = np.tile(key.qpos, (n, 1))
    qvel = np.zeros((n, model.nv))
    for i in range(1, n):
        qpos[i, :2] = rng.uniform(-0.5, 0.5, 2)
        qpos[i, 2] = rng.uniform(0.2, 0.8)  # some below the 0.3 m termination height
        tilt = rng.uniform(0, 1.6) if i % 3 else rng.uniform(0, 0.3)  # some past 65 degrees
        axis = rng.normal(size=3)
        axis[2] = 0
        q_tilt, q_yaw, quat = np.zeros(4), np.zeros(4), np.zeros(4)
        mujoco.mju_axisAngle2Quat(q_tilt, axis / np.linalg.norm(axis), tilt)
        mujoco.mju_axisAngle2Quat(q_yaw, np.array([0, 0, 1.0]), rng.uniform(-np.pi, np.pi))
        mujoco.mju_mulQuat(quat, q_yaw, q_tilt)
        qpos[i, 3:7] = quat
        qpos[i, 7:] += rng.uniform(-0.4, 0.4, model.nu)
        qvel[i] = rng.uniform(-1.5, 1.5, model.nv)
    command = np.stack([rng.uniform(-0.6, 1.0, n), rng.uniform(-0.4, 0.4, n), rng.uniform(-0.8, 0.8, n)], 1)
    command[::5, :2] = 0.0
    left = rng.uniform(0, 2 * np.pi, n)
    phase = np.stack([left, np.mod(left + np.pi, 2 * np.pi)], 1)
    last_action = rng.uniform(-1, 1, (n, model.nu))
    action = rng.uniform(-1, 1, (n, model.nu))
    def f32(x):  # exactly what both sides see
        return x.astype(np.float32).astype(np.float64)

    return dict(qpos=f32(qpos), qvel=f32(qvel), command=f32(command), gait_phase=f32(phase),
                last_action=f32(last_action), action=f32(action))


def _ours(model, x):
    n = len(x["qpos"])
    env = G1WalkFlat(model, n, 1, seed=0)
    env._qpos[:], env._qvel[:] = x["qpos"], x["qvel"]
    env.commands[:], env.phase[:], env.last_action[:] = x["command"], x["gait_phase"], x["last_action"]
    env.batch.forward(np.arange(n))  # sensors at the given state, as the reference's state write
    terms = env._reward_terms(x["action"])
    tilted, low = env._fall_terms()
    env.last_action[:] = x["action"]  # after a step the observation holds this step's action
    _, critic = env._observe(None)
    out = {f"reward_{TERM_NAMES[t]}": terms[:, k] for k, t in enumerate(REWARD_TERMS)}
    out.update(critic_obs=critic, term_tilt=tilted, term_base_height=low)
    env.close()
    return out


@pytest.fixture(scope="module")
def task_pair(run_reference, ours):
    x = _inputs(ours, B)
    return _ours(ours, x), run_reference("unilab_task_worker.py", "task", **x), x


def test_the_inputs_cover_falls_and_standing(task_pair):
    mine, theirs, _ = task_pair
    for flag in ("term_tilt", "term_base_height"):
        assert 0 < theirs[flag].sum() < B, flag  # both outcomes occur


def test_observations(task_pair):
    mine, theirs, _ = task_pair
    assert theirs["policy_obs"].shape == (B, 98) and theirs["critic_obs"].shape == (B, 101)
    # float32 on both sides: the last bits of the float32 rounding may differ
    np.testing.assert_allclose(mine["critic_obs"][:, :98], theirs["policy_obs"], atol=2e-6, rtol=1e-6)
    np.testing.assert_allclose(mine["critic_obs"], theirs["critic_obs"], atol=2e-6, rtol=1e-6)


@pytest.mark.parametrize("term", list(TERM_NAMES.values()))
def test_reward_terms(task_pair, term):
    mine, theirs, _ = task_pair
    # the reference evaluates in float32, ours in float64
    np.testing.assert_allclose(mine[f"reward_{term}"], theirs[f"reward_{term}"], rtol=1e-5, atol=1e-6, err_msg=term)


def test_weights_and_total(task_pair):
    mine, theirs, _ = task_pair
    cfg = TaskConfig()
    total = np.zeros(B)
    for ours_name, ref_name in TERM_NAMES.items():
        w = cfg.reward_weights[ours_name] * (cfg.penalty_scale_init if cfg.reward_weights[ours_name] < 0 else 1.0)
        assert float(theirs[f"weight_{ref_name}"]) == pytest.approx(w), ref_name
        total += w * mine[f"reward_{ref_name}"]
    np.testing.assert_allclose(total * cfg.reward_dt_scale, theirs["reward_total"], rtol=1e-5, atol=1e-6)


def test_terminations(task_pair):
    mine, theirs, _ = task_pair
    np.testing.assert_array_equal(mine["term_tilt"], theirs["term_tilt"])
    np.testing.assert_array_equal(mine["term_base_height"], theirs["term_base_height"])


def test_curriculum_moves_the_same_way(run_reference):
    """The same episode lengths, step by step: scale and moving average agree."""
    rng = np.random.default_rng(3)
    num_envs = 256  # window int(1000 * 256 / 4096) = 62
    counts, lengths = [], []
    # long episodes (scale climbs), then short ones (it falls), then middling (it stays),
    # with steps where nothing ends
    for lo, hi, steps in ((800, 1000, 250), (5, 120, 200), (300, 600, 100), (700, 1000, 150)):
        for _ in range(steps):
            k = int(rng.integers(0, 12))
            counts.append(k)
            lengths.extend(rng.integers(lo, hi, k).tolist())
    counts = np.array(counts)
    theirs = run_reference("unilab_task_worker.py", "curriculum", num_envs=np.array(num_envs),
                           lengths=np.array(lengths, dtype=np.float64), counts=counts)
    cur = PenaltyCurriculum(TaskConfig(), num_envs)
    assert cur.window == int(theirs["window_size"]) == 62
    scale, average, start = [], [], 0
    for k in counts:
        cur.record(np.array(lengths[start : start + k]))
        start += k
        cur.update()
        scale.append(cur.scale)
        average.append(cur.mean_length)
    np.testing.assert_allclose(scale, theirs["scale"], rtol=1e-12)
    np.testing.assert_allclose(average, theirs["average"], rtol=1e-9)
    assert max(scale) > 0.07 and scale[-1] < max(scale)  # it did move both ways


def test_reset_draws_have_the_reference_distributions(run_reference, ours):
    """Distributions of one full reset: the reference's draws against ours (4096 envs)."""
    n = 4096
    theirs = run_reference("unilab_task_worker.py", "reset_stats", num_envs=np.array(n))
    env = G1WalkFlat(ours, n, 1, seed=0)
    mine = {
        "gait_phase": env.phase, "command": env.commands, "kp": env.kp_scale, "kd": env.kd_scale,
        "qvel": env._qvel[:, :6].copy(), "steps": env.timeout_counter.copy(),
    }
    env_quat = env._qpos[:, 3:7].copy()
    env.close()
    t_kp = theirs["kp"] / theirs["kp_nominal"]
    t_kd = theirs["kd"] / theirs["kd_nominal"]
    for name, a, b in (("kp", mine["kp"], t_kp), ("kd", mine["kd"], t_kd)):
        assert b.min() >= 0.9 - 1e-6 and b.max() <= 1.1 + 1e-6 and a.min() >= 0.9 and a.max() <= 1.1, name
        assert np.ptp(b, axis=1).min() > 0.05 and np.ptp(a, axis=1).min() > 0.05, name  # per actuator
    for name, a, b in (("phase", mine["gait_phase"], theirs["gait_phase"]),):
        for p in (a, b):  # left ~ U(0, 2pi), right = left + pi, not yet wrapped
            assert p[:, 0].min() >= 0 and p[:, 0].max() < 2 * np.pi
            np.testing.assert_allclose(p[:, 1] - p[:, 0], np.pi, atol=1e-5)
    # same distributions: quantiles of n=4096 uniform draws agree to a few 1/sqrt(n)
    tol = 4 / np.sqrt(n)
    qs = np.linspace(0.1, 0.9, 9)

    def close(a, b, span):
        np.testing.assert_allclose(np.quantile(a, qs), np.quantile(b, qs), atol=tol * span)

    close(mine["gait_phase"][:, 0], theirs["gait_phase"][:, 0], 2 * np.pi)
    close(mine["steps"], theirs["episode_length_buf"], 1000)
    for j in range(3):
        close(mine["command"][:, j], theirs["command"][:, j], 1.6)
    zeroed_m = np.mean(np.hypot(*mine["command"][:, :2].T) == 0)
    zeroed_t = np.mean(np.hypot(*theirs["command"][:, :2].T) == 0)
    assert abs(zeroed_m - zeroed_t) < 4 * np.sqrt(0.1 * 0.9 / n)  # the dead zone, ~10 %
    for j in range(6):  # base velocity; angular x, y are world draws seen in the body frame
        close(mine["qvel"][:, j], theirs["qvel"][:, j], 1.4)
    # the angular velocity is drawn in the world frame on both sides: rotated back to world
    # it lies in the +-0.5 box, while in the body frame (where MuJoCo keeps it) it does not
    mine_q = np.concatenate([np.zeros((n, 3)), env_quat], axis=1)
    for name, q, v in (("ours", mine_q, mine["qvel"]), ("reference", theirs["qpos"], theirs["qvel"])):
        w_world = np.empty((n, 3))
        for i in range(n):
            mat = np.zeros(9)
            mujoco.mju_quat2Mat(mat, q[i, 3:7])
            w_world[i] = mat.reshape(3, 3) @ v[i, 3:6]
        assert np.abs(w_world).max() <= 0.5 + 1e-5, name
        assert np.abs(v[:, 3:5]).max() > 0.55, name
