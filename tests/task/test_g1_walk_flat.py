import math

import mujoco
import numpy as np
import pytest

from sacscale.task import g1_model as g1
from sacscale.task.g1_walk_flat import G1WalkFlat, StepOutput
from sacscale.task.terms import REWARD_TERMS
from sacscale.task.walk_rules import PenaltyCurriculum, TaskConfig, stand_still_tracking, swing_height_target

N = 16


def random_actions(rng, n=N):
    return rng.uniform(-1, 1, (n, 29)).astype(np.float32)


def quat_about(axis, angle):
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    return np.concatenate([[np.cos(angle / 2)], np.sin(angle / 2) * axis])


@pytest.fixture
def env(g1_model):
    return G1WalkFlat(g1_model, N, 1, seed=3)


def test_shapes_dtypes_finite(env):
    a, c = env.reset()
    assert a.shape == (N, 98) and c.shape == (N, 101)
    assert a.dtype == np.float32 and c.dtype == np.float32
    rng = np.random.default_rng(0)
    for _ in range(30):
        out = env.step(random_actions(rng))
        assert isinstance(out, StepOutput)
        outputs = ((out.actor_obs, 98), (out.critic_obs, 101), (out.next_actor_obs, 98), (out.next_critic_obs, 101))
        for x, dim in outputs:
            assert x.shape == (N, dim) and x.dtype == np.float32 and np.isfinite(x).all()
        assert out.reward.shape == (N,) and out.reward.dtype == np.float32 and np.isfinite(out.reward).all()
        assert out.terminated.dtype == bool and out.truncated.dtype == bool
        assert not (out.terminated & out.truncated).any()
        assert set(REWARD_TERMS) == {k.split("/", 1)[1] for k in out.info if k.startswith("reward/")}
        # per-term means are the weighted contributions: they add up to the mean reward
        total = sum(out.info[f"reward/{t}"] for t in REWARD_TERMS)
        assert total == pytest.approx(float(out.reward.astype(np.float64).mean()), rel=1e-5, abs=1e-6)


def test_observation_layout_after_reset(env):
    a, c = env.reset()
    assert np.allclose(c[:, 6:35], 0)  # joints at the keyframe
    assert np.allclose(c[:, 64:93], 0)  # last action zeroed
    assert np.allclose(c[:, 93:96], env.commands.astype(np.float32))
    # gait phase: left ~ U(0, 2pi), the right foot half a cycle on (wrapped at the next step)
    assert (c[:, 96] >= 0).all() and (c[:, 96] < 2 * np.pi).all() and np.ptp(c[:, 96]) > 1.0
    assert np.allclose(c[:, 97], c[:, 96] + np.pi, atol=1e-6)
    # a yawed upright robot: minus the up vector is (0, 0, -1)
    assert np.allclose(c[:, 3:6], [0, 0, -1], atol=1e-6)
    # pelvis velocity (critic only) reflects the random base velocity of the reset
    assert np.abs(c[:, 98:101]).max() > 0.05
    # the actor sees the critic's first 98 values, plus noise on joint angles and velocities only
    diff = a - c[:, :98]
    assert np.all(diff[:, :6] == 0) and np.all(diff[:, 64:] == 0)
    assert 0 < np.abs(diff[:, 6:35]).max() <= 0.01 + 1e-6
    assert 0 < np.abs(diff[:, 35:64]).max() <= 0.1 * 0.05 + 1e-6


def test_reset_state_distribution(env):
    env.reset()
    q, v = env._qpos, env._qvel
    assert np.allclose(q[:, 2], 0.754)
    assert np.abs(q[:, 0:2]).max() <= 0.5 and np.abs(q[:, 0:2]).max() > 0.1
    assert np.allclose(q[:, 4:6], 0) and np.allclose(np.linalg.norm(q[:, 3:7], axis=1), 1)
    assert np.abs(v[:, 0:3]).max() <= 0.5 and np.abs(v[:, 6:]).max() == 0
    # the angular velocity was drawn in the world frame: rotated back it lies in the box
    yaw = 2 * np.arctan2(q[:, 6], q[:, 3])
    c, s = np.cos(yaw), np.sin(yaw)
    w_world = np.stack([c * v[:, 3] - s * v[:, 4], s * v[:, 3] + c * v[:, 4], v[:, 5]], axis=1)
    assert np.abs(w_world).max() <= 0.5 + 1e-12
    assert np.allclose(q[:, 7:], g1.DEFAULT_JOINT_POS)


def test_staggered_timeout_counters(g1_model):
    env = G1WalkFlat(g1_model, 64, 1, seed=0)
    c = env.timeout_counter
    assert c.min() >= 0 and c.max() < 1000 and len(np.unique(c)) > 32
    assert (env.episode_length == 0).all()


def test_truncation_is_staggered_and_not_termination(g1_model):
    cfg = TaskConfig(episode_length=6)
    env = G1WalkFlat(g1_model, N, 1, seed=1, config=cfg)
    assert len(np.unique(env.timeout_counter)) > 1
    truncated_at = np.full(N, -1)
    for t in range(6):
        out = env.step(np.zeros((N, 29), np.float32))
        first = out.truncated & (truncated_at < 0)
        truncated_at[first] = t
        assert not (out.truncated & out.terminated).any()
    assert (truncated_at >= 0).sum() > N // 2
    assert len(np.unique(truncated_at[truncated_at >= 0])) > 1  # spread over several steps


def test_termination_by_tilt(env):
    env.reset()
    q = env._qpos
    q[0, 3:7] = quat_about([1, 0, 0], np.deg2rad(75))  # hovering, pelvis stays high
    q[1, 3:7] = quat_about([0, 1, 0], np.deg2rad(50))  # tilted but within 65 degrees
    out = env.step(np.zeros((N, 29), np.float32))
    assert out.terminated[0] and not out.truncated[0]
    assert not out.terminated[1]
    assert out.next_critic_obs[0, 5] > -np.cos(np.deg2rad(65))  # -up_z of the fallen state


def test_termination_by_height(g1_model):
    # a robot lying on its back: pelvis below 0.3 m (and tilted)
    env = G1WalkFlat(g1_model, N, 1, seed=2)
    env._qpos[2, 2] = 0.15
    env._qpos[2, 3:7] = quat_about([0, 1, 0], -np.pi / 2)
    out = env.step(np.zeros((N, 29), np.float32))
    assert out.terminated[2]
    # height alone: a threshold above the standing height ends every episode
    env = G1WalkFlat(g1_model, N, 1, seed=2, config=TaskConfig(min_pelvis_height=0.8))
    out = env.step(np.zeros((N, 29), np.float32))
    assert out.terminated.all()


def test_reset_after_termination(env):
    env.reset()
    rng = np.random.default_rng(5)
    for _ in range(3):
        env.step(random_actions(rng))
    gains_before = env.kp_scale.copy()
    env._qpos[4, 3:7] = quat_about([1, 0, 0], np.deg2rad(80))
    out = env.step(random_actions(rng))
    assert out.terminated[4]
    # the next observation is the fallen state, the returned one the fresh episode
    assert not np.allclose(out.next_critic_obs[4], out.critic_obs[4])
    assert np.allclose(out.critic_obs[4, 6:35], 0)  # keyframe joints
    assert np.allclose(out.critic_obs[4, 64:93], 0)  # last action zeroed
    assert np.allclose(out.actor_obs[4, 64:93], 0)
    assert np.allclose(out.critic_obs[4, 93:96], env.commands[4].astype(np.float32))
    assert env.episode_length[4] == 0 and env.timeout_counter[4] == 0 and env.episode_return[4] == 0
    assert 0 <= env.phase[4, 0] < 2 * np.pi and env.phase[4, 1] == pytest.approx(env.phase[4, 0] + np.pi)
    assert env._qpos[4, 2] == pytest.approx(0.754)
    assert not np.allclose(env.kp_scale[4], gains_before[4])
    # envs that did not end carry on: their returned observation is the reached state
    alive = ~(out.terminated | out.truncated)
    assert np.array_equal(out.actor_obs[alive], out.next_actor_obs[alive])
    assert np.array_equal(out.critic_obs[alive], out.next_critic_obs[alive])
    # the episode that ended is reported
    ended = np.flatnonzero(out.terminated | out.truncated)
    assert len(out.info["episode_length"]) == len(ended)
    assert 4 in ended and out.info["episode_length"][list(ended).index(4)] == 4


def test_last_action_and_phase_in_observation(env):
    env.reset()
    a = np.full((N, 29), 0.25, np.float32)
    phase0 = env.phase.copy()
    out = env.step(a)
    alive = ~(out.terminated | out.truncated)
    assert np.allclose(out.next_critic_obs[:, 64:93], 0.25)
    dphase = 2 * np.pi * 1.5 * 0.02
    expect = np.mod(phase0 + dphase, 2 * np.pi)  # both feet advance, kept in [0, 2pi)
    assert np.allclose(out.next_critic_obs[:, 96:98], expect, atol=1e-6)
    assert (out.next_critic_obs[:, 96:98] < 2 * np.pi).all()
    out = env.step(np.clip(a * 10, -1, 1))  # out-of-range actions are clipped
    assert np.allclose(out.next_critic_obs[alive, 64:93], 1.0)


def test_seeded_determinism_and_thread_invariance(g1_model):
    def rollout(seed, threads):
        env = G1WalkFlat(g1_model, N, threads, seed=seed)
        obs = [env.reset()[1]]
        rng = np.random.default_rng(7)
        for _ in range(40):
            out = env.step(random_actions(rng))
            obs += [out.critic_obs, out.next_actor_obs, out.reward]
        return obs

    base = rollout(11, 1)
    assert all(np.array_equal(x, y) for x, y in zip(base, rollout(11, 1)))
    assert all(np.array_equal(x, y) for x, y in zip(base, rollout(11, 2)))
    assert not all(np.array_equal(x, y) for x, y in zip(base, rollout(12, 1)))


def test_kp_kd_randomisation_reaches_the_sims(env, g1_model):
    env.reset()
    kp0 = g1_model.actuator_gainprm[:, 0]
    kv0 = -g1_model.actuator_biasprm[:, 2]
    gain = env.batch.expanded("actuator_gainprm")
    bias = env.batch.expanded("actuator_biasprm")
    kp_ratio = gain[:, :, 0] / kp0
    kd_ratio = -bias[:, :, 2] / kv0
    # an independent scale per env and actuator (the reference's pd_gains), within [0.9, 1.1]
    assert kp_ratio.min() >= 0.9 and kp_ratio.max() <= 1.1 and kd_ratio.min() >= 0.9 and kd_ratio.max() <= 1.1
    assert np.ptp(kp_ratio, axis=1).min() > 0.05 and np.ptp(kd_ratio, axis=1).min() > 0.05  # across actuators
    assert np.ptp(kp_ratio[:, 0]) > 0.05  # across envs
    assert not np.allclose(kp_ratio, kd_ratio)  # independent draws
    assert np.allclose(kp_ratio, env.kp_scale) and np.allclose(kd_ratio, env.kd_scale)
    assert np.allclose(bias[:, :, 1], -gain[:, :, 0])  # position servo stays consistent
    # the simulation really runs on them
    for i in (0, N - 1):
        m = env.batch.get_model(i)
        assert np.allclose(m.actuator_gainprm[:, 0], kp0 * env.kp_scale[i])
        assert np.allclose(-m.actuator_biasprm[:, 2], kv0 * env.kd_scale[i])
    # same state, different gains -> different motion
    env._qpos[:] = env._qpos[0]
    env._qvel[:] = 0
    env.step(np.full((N, 29), 0.5, np.float32))
    q = env._qpos[:, 7:]
    assert np.ptp(q[:, 3]) > 1e-4


def _record(env, lengths):
    env.curriculum.record(np.asarray(lengths))
    env.curriculum.update()


def test_curriculum_schedule_and_window():
    cfg = TaskConfig()
    assert (cfg.penalty_scale_init, cfg.penalty_scale_range) == (0.0625, (0.0625, 0.125))
    assert PenaltyCurriculum(cfg, 4096).window == 1000
    assert PenaltyCurriculum(cfg, 2048).window == 500
    assert PenaltyCurriculum(cfg, 16).window == 3
    assert PenaltyCurriculum(cfg, 1).window == 1  # never zero


def test_curriculum_moving_average():
    cur = PenaltyCurriculum(TaskConfig(), 2048)  # window 500
    assert cur.mean_length == 0.0
    cur.record(np.full(100, 400.0))
    cur.update()
    assert cur.mean_length == pytest.approx(400 * 100 / 500)  # weight 100/500 toward 400
    cur.record(np.full(50, 900.0))
    cur.record(np.full(50, 100.0))  # two records before one update: one batch of 100, mean 500
    cur.update()
    assert cur.mean_length == pytest.approx(80 + (500 - 80) * 0.2)
    cur.record(np.full(600, 30.0))  # more than a window: the average jumps to the batch mean
    cur.update()
    assert cur.mean_length == pytest.approx(30.0)
    cur.update()  # nothing ended since: unchanged
    assert cur.mean_length == pytest.approx(30.0)


def test_curriculum_direction(env):
    cfg = env.cfg
    lo, hi = cfg.penalty_scale_range
    env.curriculum.scale = 0.1
    _record(env, np.full(10, 50))  # short episodes: relax penalties
    assert env.penalty_scale == pytest.approx(0.1 * (1 - cfg.penalty_scale_rate))
    for _ in range(3):
        _record(env, np.full(env.curriculum.window, 900))  # long episodes: tighten
    assert env.penalty_scale == pytest.approx(0.1 * (1 - cfg.penalty_scale_rate) * (1 + cfg.penalty_scale_rate) ** 3)
    _record(env, np.full(env.curriculum.window, 400))  # in between: unchanged
    assert env.penalty_scale == pytest.approx(0.1 * (1 - cfg.penalty_scale_rate) * (1 + cfg.penalty_scale_rate) ** 3)
    env.curriculum.scale = hi
    _record(env, np.full(env.curriculum.window, 900))
    assert env.penalty_scale == hi  # clipped at the top
    env.curriculum.scale = lo
    _record(env, np.full(env.curriculum.window, 10))
    assert env.penalty_scale == lo  # and at the bottom


def test_curriculum_scales_only_penalties(env):
    env.reset()
    env.curriculum.scale = 1.0
    out1 = env.step(np.zeros((N, 29), np.float32))
    env.reset()
    env.curriculum.scale = 0.5
    # identical state and noise are not needed: compare the ratio of the weighted terms
    out2 = env.step(np.zeros((N, 29), np.float32))
    assert out2.info["curriculum/penalty_scale"] <= 0.5
    assert out1.info["reward/alive"] == pytest.approx(out2.info["reward/alive"]) == pytest.approx(0.2)
    assert out1.info["reward/pose"] < 0 and out2.info["reward/pose"] < 0


def test_short_episodes_lower_the_scale(g1_model):
    env = G1WalkFlat(g1_model, N, 1, seed=4)
    env.curriculum.scale = 0.1
    rng = np.random.default_rng(0)
    for _ in range(120):
        env.step(random_actions(rng))  # random actions fall within a second
    assert env.curriculum.mean_length < 150
    assert env.penalty_scale < 0.1


def test_command_sampling(env):
    cmd = env._sample_commands(20000)
    assert cmd[:, 0].min() >= -0.6 and cmd[:, 0].max() <= 1.0
    assert np.abs(cmd[:, 1]).max() <= 0.4 and np.abs(cmd[:, 2]).max() <= 0.8
    lin = np.hypot(cmd[:, 0], cmd[:, 1])
    zeroed = lin == 0
    assert zeroed.mean() > 0.02  # the rule fires
    assert (lin[~zeroed] > 0.2).all()  # and nothing small survives it
    assert np.abs(cmd[zeroed, 2]).max() > 0.5  # yaw rate is left alone


def test_swing_target():
    apex = 0.09
    assert swing_height_target(np.array([-np.pi]), apex)[0] == pytest.approx(0)
    assert swing_height_target(np.array([0.0]), apex)[0] == pytest.approx(apex)
    ph = np.linspace(-np.pi, 0, 50)
    h = swing_height_target(ph, apex)
    assert (np.diff(h) >= 0).all() and h.min() >= 0 and h.max() <= apex
    assert np.allclose(swing_height_target(-ph[1:-1], apex), h[1:-1])  # symmetric
    # a cubic Bezier with control heights (0, 0, apex, apex): half height at a quarter cycle
    assert swing_height_target(np.array([-np.pi / 2]), apex)[0] == pytest.approx(apex / 2)


def test_unstable_simulation_is_reset_not_fatal(env, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # MuJoCo appends its warning to ./MUJOCO_LOG.TXT
    env.reset()
    env._qvel[3, 6:] = np.nan
    out = env.step(np.zeros((N, 29), np.float32))
    assert out.terminated[3] and out.info["sim_errors"] >= 1
    assert out.reward[3] == 0
    for x in (out.actor_obs, out.critic_obs, out.next_actor_obs, out.next_critic_obs):
        assert np.isfinite(x).all()
    assert np.isfinite(env._qvel).all() and env.episode_length[3] == 0
    out = env.step(np.zeros((N, 29), np.float32))  # the pool carries on
    assert out.info["sim_errors"] == 0


def test_step_timings(g1_model):
    env = G1WalkFlat(g1_model, 4, 1, seed=0)
    info = env.step(np.zeros((4, 29), np.float32)).info
    assert info["time/physics_s"] > 0 and info["time/task_s"] > 0
    # a plain step waits for all of its physics
    assert 0 < info["time/physics_wait_s"] <= info["time/physics_s"] * 1.5 + 1e-3
    env.close()


def test_split_step_order_is_enforced(env):
    a = np.zeros((N, 29), np.float32)
    with pytest.raises(RuntimeError, match="without start_step"):
        env.finish_step()
    env.start_step(a)
    assert env.step_started
    with pytest.raises(RuntimeError, match="twice"):
        env.start_step(a)
    env.finish_step()
    assert not env.step_started


def test_shared_curriculum_moves_once_per_update():
    cfg = TaskConfig()
    shared = PenaltyCurriculum(cfg, 16)  # window 3
    shared.scale = 0.1
    shared.record(np.full(10, 50))  # two halves report their ended episodes...
    shared.record(np.full(7, 60))
    shared.update()  # ...and their owner updates once per round, with all 17 as one batch
    assert shared.scale == pytest.approx(0.1 * (1 - cfg.penalty_scale_rate))
    assert shared.mean_length == pytest.approx((10 * 50 + 7 * 60) / 17)
    shared.update()  # no episode ended since: no move
    assert shared.scale == pytest.approx(0.1 * (1 - cfg.penalty_scale_rate))


def test_reset_refused_while_a_step_runs(env):
    env.start_step(np.zeros((N, 29), np.float32))
    with pytest.raises(RuntimeError, match="between start_step and finish_step"):
        env.reset()
    env.finish_step()
def test_bad_actions(env):
    with pytest.raises(ValueError):
        env.step(np.zeros((N - 1, 29), np.float32))
    a = np.zeros((N, 29), np.float32)
    a[2, 5] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        env.step(a)


def test_tilt_input_world_and_torso_frames(g1_model):
    """world (the reference's): minus the torso z-axis in world coordinates, so a yawed
    tilted robot reads differently by heading; torso: gravity in the IMU frame, heading-free."""
    envs = {k: G1WalkFlat(g1_model, 2, 1, seed=0, config=TaskConfig(tilt_obs=k)) for k in ("world", "torso")}
    tilt = quat_about([0, 1, 0], 0.3)  # pitched forward 0.3 rad
    obs = {}
    for k, env in envs.items():
        for i, yaw in enumerate((0.0, np.pi / 2)):
            q = np.zeros(4)
            mujoco.mju_mulQuat(q, quat_about([0, 0, 1], yaw), tilt)
            env._qpos[i, 3:7] = q
        env.batch.forward(np.arange(2))
        obs[k] = env._observe(None)[1][:, 3:6]
    w, t = obs["world"], obs["torso"]
    assert not np.allclose(w[0], w[1], atol=1e-3)  # the world-frame input moves with the heading
    assert np.allclose(t[0], t[1], atol=1e-6)  # the body-frame one does not
    assert np.allclose(np.linalg.norm(t, axis=1), 1, atol=1e-6) and t[0, 2] < -0.9
    with pytest.raises(ValueError, match="tilt_obs"):
        G1WalkFlat(g1_model, 2, 1, seed=0, config=TaskConfig(tilt_obs="pelvis"))


def test_reward_terms_raw_and_falls_in_info(env):
    env.reset()
    env._qpos[0, 3:7] = quat_about([1, 0, 0], np.deg2rad(80))
    out = env.step(np.zeros((N, 29), np.float32))
    cfg = env.cfg
    assert out.info["falls"] >= 1 and out.terminated[0]
    for t in REWARD_TERMS:
        raw, weighted = out.info[f"reward_raw/{t}"], out.info[f"reward/{t}"]
        w = cfg.reward_weights[t] * cfg.reward_dt_scale * (env.penalty_scale if cfg.reward_weights[t] < 0 else 1)
        assert weighted == pytest.approx(w * raw, rel=1e-9, abs=1e-12), t
    assert out.info["reward_raw/alive"] == 1.0


def test_command_override_replaces_sampling(g1_model):
    env = G1WalkFlat(g1_model, 4, 1, seed=0)
    fixed = np.array([[0.5, 0, 0], [0, 0.3, 0], [0, 0, -0.6], [0.0, 0.0, 0.0]])
    env.command_override = fixed
    env.reset()
    assert np.array_equal(env.commands, fixed)
    env._qpos[1, 3:7] = quat_about([1, 0, 0], np.deg2rad(80))
    out = env.step(np.zeros((4, 29), np.float32))
    assert out.terminated[1] and np.array_equal(env.commands[1], fixed[1])  # kept through the reset
    assert np.allclose(out.critic_obs[:, 93:96], fixed)


def test_stand_still_tracking_equals_its_closed_form():
    """E[w dt exp(-wz^2 / sigma)] for wz ~ U(a, b), and the planar term within its Monte-Carlo error."""
    cfg = TaskConfig()
    got = stand_still_tracking(cfg, samples=400_000, seed=1)
    a, b = cfg.cmd_wz
    s = cfg.tracking_sigma
    mean = math.sqrt(math.pi * s) / 2 * (math.erf(b / math.sqrt(s)) - math.erf(a / math.sqrt(s))) / (b - a)
    top = cfg.reward_weights["tracking_ang_vel"] * cfg.reward_dt_scale
    assert got["tracking_ang_vel"] == pytest.approx(top * mean, rel=3e-3)
    assert got["tracking_ang_vel_max"] == top and got["tracking_lin_vel_max"] == 2.0 * 0.02
    # nothing to track: standing still is perfect
    idle = stand_still_tracking(TaskConfig(cmd_vx=(0.0, 0.0), cmd_vy=(0.0, 0.0), cmd_wz=(0.0, 0.0)), samples=1000)
    assert idle["tracking_lin_vel"] == idle["tracking_lin_vel_max"]
    assert idle["tracking_ang_vel"] == idle["tracking_ang_vel_max"]
    # the dead zone: commands with |v_xy| <= 0.2 are zeroed, which standing still tracks perfectly
    dead = stand_still_tracking(TaskConfig(cmd_vx=(-0.1, 0.1), cmd_vy=(-0.1, 0.1)), samples=1000)
    assert dead["tracking_lin_vel"] == pytest.approx(dead["tracking_lin_vel_max"])


def test_state_read_by_evaluation_and_videos(env):
    """qpos/qvel are the live state (the free joint first), torso_yaw_rate is the gyro's z the
    observation scales, and observe() gives what a step's observation would be without noise."""
    env.step(random_actions(np.random.default_rng(0)))
    assert env.qpos.shape == (N, 36) and env.qvel.shape == (N, 35)
    _, critic = env.observe()
    np.testing.assert_allclose(critic[:, 6:35], env.qpos[:, 7:36] - g1.DEFAULT_JOINT_POS, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(critic[:, 2], env.torso_yaw_rate() * env.cfg.gyro_scale, rtol=1e-6, atol=1e-6)
    yaw_rate = env.torso_yaw_rate()
    yaw_rate[:] = np.nan  # a copy: the env's sensors are untouched
    assert np.isfinite(env.torso_yaw_rate()).all()
