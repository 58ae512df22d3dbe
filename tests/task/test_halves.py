import numpy as np
import pytest

from sacscale.task.g1_walk_flat import G1WalkFlat
from sacscale.task.walk_rules import PenaltyCurriculum, TaskConfig
from sacscale.task.halves import SEED_STRIDE, EnvHalves, rounds

N = 12


def obs_policy(i, actor_obs, critic_obs):
    """Deterministic actions that depend on the observations (so order bugs show)."""
    return np.tanh(actor_obs[:, 6:35] * 3.0 + 0.1 * (i + 1)).astype(np.float32)


def test_halves_match_the_same_halves_stepped_one_after_the_other(g1_model):
    """Overlapping one half's task work with the other's physics changes nothing."""
    # every ended episode counts as short, so each update with resets moves the scale
    cfg = TaskConfig(curriculum_low=2000.0)
    envs = EnvHalves(g1_model, N, 2, seed=5, pipeline="halves", config=cfg)
    envs.curriculum.scale = 0.1  # off its floor, so the order of its updates shows in the rewards
    stepping = rounds(envs, obs_policy)
    got = [next(stepping) for _ in range(25)]
    stepping.close()
    envs.close()

    shared = PenaltyCurriculum(cfg, N)
    shared.scale = 0.1
    sizes = (N // 2, N - N // 2)
    parts = [G1WalkFlat(g1_model, n, 2, 5 + i * SEED_STRIDE, config=cfg, curriculum=shared)
             for i, n in enumerate(sizes)]
    obs = [p.reset()[0] for p in parts]
    for r in range(25):
        for i, p in enumerate(parts):
            out = p.step(obs_policy(i, obs[i], None))
            obs[i] = out.actor_obs
            ref = got[r][i]
            for name in ("next_critic_obs", "next_actor_obs", "actor_obs", "reward", "terminated"):
                np.testing.assert_array_equal(getattr(ref, name), getattr(out, name), err_msg=f"round {r} {name}")
            assert ref.info["curriculum/penalty_scale"] == out.info["curriculum/penalty_scale"]
        shared.update()  # the halves only record; one update per round
    assert shared.scale == envs.curriculum.scale < 0.1  # ended episodes moved the scale
    assert sum(p.total_resets for p in parts) > 2 * N  # the episodes did end and reset
    for p in parts:
        p.close()


def test_halves_share_one_curriculum_and_split_the_rows(g1_model):
    envs = EnvHalves(g1_model, 7, 1, seed=0)
    assert [p.num_envs for p in envs.parts] == [3, 4]
    assert envs.rows == [slice(0, 3), slice(3, 7)]
    assert envs.parts[0].curriculum is envs.parts[1].curriculum is envs.curriculum
    envs.close()


def test_serial_is_one_part(g1_model):
    envs = EnvHalves(g1_model, 5, 1, seed=0, pipeline="serial")
    assert len(envs.parts) == 1 and envs.rows == [slice(0, 5)]
    stepping = rounds(envs, lambda i, a, c: np.zeros((5, 29), np.float32))
    (out,) = next(stepping)
    assert out.reward.shape == (5,)
    stepping.close()
    envs.close()


def test_bad_pipeline(g1_model):
    with pytest.raises(ValueError, match="pipeline must be one of"):
        EnvHalves(g1_model, 4, 1, seed=0, pipeline="thirds")
    with pytest.raises(ValueError, match="at least 2 envs"):
        EnvHalves(g1_model, 1, 1, seed=0)
