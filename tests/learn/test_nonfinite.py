"""Non-finite data never reaches the learner unseen: the replay drops (never samples),
counts and names a transition with NaN or inf in any field; the C51 projection gives a
non-finite target no mass and cannot index out of bounds, eager and compiled; the
observation statistics leave such rows out. All on CPU."""

import math

import pytest
import torch

from sacscale.learn import c51, graph
from sacscale.learn.learner import FastSACLearner
from sacscale.learn.replay import FIELDS, ReplayBuffer

DIMS = dict(actor_obs_dim=3, critic_obs_dim=4, action_dim=2)
BAD_VALUES = [math.nan, math.inf, -math.inf]
BAD_IDS = ["nan", "inf", "-inf"]


def rows(n, seed=0):
    g = torch.Generator().manual_seed(seed)
    return dict(actor_obs=torch.randn(n, 3, generator=g), critic_obs=torch.randn(n, 4, generator=g),
                action=torch.rand(n, 2, generator=g) * 2 - 1, reward=torch.randn(n, generator=g),
                next_actor_obs=torch.randn(n, 3, generator=g), next_critic_obs=torch.randn(n, 4, generator=g),
                terminated=torch.zeros(n))


def poison(data, field, row, value):
    """Put `value` into one element of `field` of transition `row`."""
    t = data[field]
    if t.dim() == 1:
        t[row] = value
    else:
        t[row, -1] = value


# ---------------------------------------------------------------- the projection
def _project_inputs(n=6, atoms=11, seed=0):
    g = torch.Generator().manual_seed(seed)
    probs = torch.softmax(torch.randn(n, atoms, generator=g), -1)
    return probs, torch.randn(n, generator=g), torch.full((n,), 0.97)


@pytest.mark.parametrize("value", BAD_VALUES, ids=BAD_IDS)
@pytest.mark.parametrize("where", ["reward", "discount", "probs"])
def test_a_non_finite_target_gets_no_mass_and_the_others_are_unchanged(where, value):
    probs, reward, discount = _project_inputs()
    clean = c51.project(probs, reward, discount, -2.0, 2.0)
    {"reward": reward, "discount": discount, "probs": probs[:, 4]}[where][2] = value
    out, invalid = c51.project(probs, reward, discount, -2.0, 2.0, return_invalid=True)
    assert invalid.tolist() == [False, False, True, False, False, False]
    assert torch.isfinite(out).all()
    assert torch.equal(out[2], torch.zeros(11))
    keep = ~invalid
    assert torch.equal(out[keep], clean[keep])
    torch.testing.assert_close(out[keep].sum(-1), torch.ones(5))


def test_every_row_non_finite_is_all_zeros():
    probs, reward, discount = _project_inputs()
    reward[:] = math.nan
    out, invalid = c51.project(probs, reward, discount, -2.0, 2.0, return_invalid=True)
    assert invalid.all() and torch.equal(out, torch.zeros_like(out))


def test_large_finite_targets_are_clamped_not_dropped():
    probs, reward, discount = _project_inputs(n=3)
    reward[:] = torch.tensor([3e38, -3e38, 0.0])
    discount[2] = 3e38  # r + d z overflows to +-inf: clamped to the ends, still finite input
    out, invalid = c51.project(probs, reward, discount, -2.0, 2.0, return_invalid=True)
    assert not invalid.any()
    assert out[0, -1] == pytest.approx(1.0) and out[1, 0] == pytest.approx(1.0)
    torch.testing.assert_close(out.sum(-1), torch.ones(3))


def test_compiled_projection_is_safe_on_cpu():
    """Inductor's CPU kernels of the projection (what the compiled critic loss inlines):
    NaN and inf targets counted and given no mass. Scalar kernels, as in
    test_compiled_matches_eager_on_cpu: SIMD codegen probes the CPU's instruction sets
    and compiles more (measured: 14 -> 6.5 s of CPU); what is checked is our masking
    under compile, not Inductor's vectoriser. Compiled in this process, without a pool of
    compile workers that each import torch."""
    probs, reward, discount = _project_inputs(n=8, atoms=101)
    reward[1], reward[3], discount[5], probs[6, 0] = math.nan, math.inf, -math.inf, math.nan
    import torch._inductor.config as inductor

    compiled = torch.compile(c51.project, fullgraph=True, dynamic=False)
    with inductor.patch({"cpp.vec_isa_ok": False, "compile_threads": 1}):
        out, invalid = compiled(probs, reward, discount, -20.0, 20.0, return_invalid=True)
    eager, eager_invalid = c51.project(probs, reward, discount, -20.0, 20.0, return_invalid=True)
    assert invalid.tolist() == [False, True, False, True, False, True, True, False]
    assert torch.equal(invalid, eager_invalid)
    assert torch.isfinite(out).all() and torch.equal(out[invalid], torch.zeros(4, 101))
    torch.testing.assert_close(out, eager, atol=1e-6, rtol=0)


# ---------------------------------------------------------------- the replay
@pytest.mark.parametrize("value", BAD_VALUES, ids=BAD_IDS)
@pytest.mark.parametrize("field", FIELDS)
def test_a_non_finite_row_is_dropped_counted_and_named(field, value):
    buf = ReplayBuffer(16, **DIMS, device="cpu")
    buf.add(**rows(5))
    data = rows(6, seed=1)
    poison(data, field, 4, value)
    buf.add(**data)
    assert buf.size == 11  # the ring still advances: the row is written, marked and never sampled
    assert buf.nonfinite_count() == 1
    assert buf.describe_first_nonfinite() == {"add": 1, "row": 4, "fields": [field]}
    assert buf.valid[:11].tolist() == [True] * 9 + [False, True]
    drawn = buf.usable(torch.arange(11))
    assert 9 not in drawn.tolist() and torch.isfinite(buf.storage[drawn]).all()
    assert torch.equal(drawn[:9], torch.arange(9))


def test_the_first_offender_is_kept_and_every_row_counted():
    buf = ReplayBuffer(8, **DIMS, device="cpu")
    data = rows(4)
    poison(data, "reward", 1, math.nan)
    poison(data, "next_actor_obs", 1, math.inf)
    poison(data, "terminated", 3, math.nan)
    buf.add(**data)
    data = rows(4, seed=2)
    poison(data, "critic_obs", 0, -math.inf)
    buf.add(**data)
    assert buf.nonfinite_count() == 3
    assert buf.describe_first_nonfinite() == {"add": 0, "row": 1, "fields": ["reward", "next_actor_obs"]}


def test_packed_rows_and_wrap_around_are_checked_too():
    buf = ReplayBuffer(8, **DIMS, device="cpu")
    buf.add(**rows(6))
    block = torch.randn(5, buf.row_dim)
    block[3, 0] = math.nan  # lands on position (6 + 3) % 8 = 1
    buf.add_packed(block)
    assert buf.nonfinite_count() == 1 and buf.describe_first_nonfinite()["row"] == 3
    assert buf.valid.tolist() == [True, False, True, True, True, True, True, True]
    buf.add(**rows(4, seed=3))  # overwrites positions 3..6: the dropped row at 1 stays dropped
    assert buf.valid.tolist() == [True, False, True, True, True, True, True, True]
    buf.add(**rows(3, seed=4))  # positions 7, 0, 1: a finite row replaces it
    assert buf.valid.all() and buf.nonfinite_count() == 1


def test_no_finite_row_left_the_fallback_moves_to_one_that_is():
    buf = ReplayBuffer(4, **DIMS, device="cpu")
    data = rows(4)
    poison(data, "reward", 0, math.nan)  # position 0: the fallback starts elsewhere
    buf.add(**data)
    assert int(buf.fallback) == 1
    everything_bad = rows(2, seed=5)
    for r in range(2):
        poison(everything_bad, "action", r, math.nan)
    buf.add(**everything_bad)  # positions 0 and 1: the fallback row is gone too
    assert int(buf.fallback) == 2 and bool(buf.valid[2])
    assert buf.usable(torch.arange(4)).tolist() == [2, 2, 2, 3]


def test_a_loaded_replay_checks_its_rows_again():
    buf = ReplayBuffer(8, **DIMS, device="cpu")
    data = rows(5)
    poison(data, "next_critic_obs", 2, math.nan)
    buf.add(**data)
    other = ReplayBuffer(8, **DIMS, device="cpu")
    other.load_state(buf.state())
    assert other.valid.tolist() == buf.valid.tolist()
    assert 2 not in other.usable(torch.arange(5)).tolist()


# ---------------------------------------------------------------- the learner
@pytest.mark.parametrize("field", ["reward", "next_actor_obs", "next_critic_obs", "terminated", "actor_obs"])
@pytest.mark.parametrize("value", BAD_VALUES, ids=BAD_IDS)
def test_the_learner_trains_on_without_the_dropped_rows(learn, field, value):
    """Before: a NaN reward made the projection raise `index ... is out of bounds`."""
    cfg = learn.small_cfg()
    learner = FastSACLearner(cfg, learn.NUM_ENVS, "cpu", compile=False)
    data = learn.transitions(cfg=cfg)
    data["terminated"] = data["terminated"].float()
    for r in (3, 50, 199):
        poison(data, field, r, value)
    learner.replay.add(**data)
    for _ in range(3):
        learner.update()
    assert learner.nonfinite_counts() == {"nonfinite_rows": 3, "nonfinite_targets": 0}
    for name, t in learn.state(learner).items():
        assert torch.isfinite(t).all(), name
    assert all(math.isfinite(v) for v in learner.metrics().values())


def test_a_non_finite_reward_that_slips_past_the_replay_is_counted_by_the_projection(learn):
    """Defence in depth: a NaN written behind the replay's check (as corrupt memory would
    be) is caught by the projection: no index error, no mass, counted."""
    cfg = learn.small_cfg()
    learner = learn.make_learner(cfg, external=True)
    learner.replay.reward[7] = math.nan  # the row stays marked valid
    r = learn.random_randoms(cfg, learn.ROWS, seed=1)
    r.indices[r.indices == 7] = 8
    r.indices[:, 0] = 7  # every critic update samples it exactly once
    learner.randoms.copy_(r)
    learner.update()
    assert learner.nonfinite_counts() == {"nonfinite_rows": 0, "nonfinite_targets": cfg.critic_updates}
    assert learner.nonfinite_target_sources() == {"reward": cfg.critic_updates, "termination": 0,
                                                  "next_logp": 0, "next_value": 0}
    for name, t in learn.state(learner).items():
        assert torch.isfinite(t).all(), name


@pytest.mark.parametrize("source", ["next_logp", "next_value"])
def test_a_non_finite_target_names_the_network_that_made_it(learn, source):
    """Rows whose every stored value is finite can still get a non-finite target from the
    networks: the actor's next log-probability or the target critics' distribution. The
    count says which, so a recurrence names its own source."""
    cfg = learn.small_cfg()
    learner = learn.make_learner(cfg, external=True)
    with torch.no_grad():
        if source == "next_logp":
            learner.actor.log_std_head.bias.fill_(math.nan)  # NaN log-std: NaN log-probability
        else:
            learner.target_critic.parameters().__next__().fill_(math.nan)
    learner.randoms.copy_(learn.random_randoms(cfg, learn.ROWS, seed=3))
    learner._iteration()  # one iteration, not update(): the state check is the trainer's
    batch = cfg.batch_size * cfg.critic_updates
    sources = learner.nonfinite_target_sources()
    assert learner.nonfinite_counts()["nonfinite_targets"] == batch
    assert sources[source] == batch
    assert sources["reward"] == sources["termination"] == 0


def test_observation_statistics_leave_non_finite_rows_out(learn):
    learner = learn.make_learner(learn.small_cfg(obs_norm=True, learning_starts=256))  # observe() merges at once
    data = learn.transitions(learn.NUM_ENVS, seed=4)
    actor, critic = data["actor_obs"].clone(), data["critic_obs"].clone()
    actor[1, 0], critic[2, 5] = math.nan, math.inf
    learner.observe(actor, critic)
    stats = learner.obs_stats["actor_obs"]
    keep = torch.tensor([True, False, False, True])
    assert float(stats.count) == 2
    torch.testing.assert_close(stats.mean, actor[keep].mean(0))
    torch.testing.assert_close(stats.var, actor[keep].var(0, unbiased=False), atol=1e-5, rtol=1e-4)
    for t in learn.state(learner).values():
        assert torch.isfinite(t).all()


def test_graph_warm_up_iterations_are_not_counted(learn):
    """What the CUDA path does around capture (warm-up, then restore): the non-finite
    target count is restored with the learning state, so only real updates count."""
    cfg = learn.small_cfg()
    learner = learn.make_learner(cfg, external=True)
    learner.replay.reward[7] = math.nan  # behind the check
    r = learn.random_randoms(cfg, learn.ROWS, seed=2)
    r.indices[r.indices == 7] = 8
    r.indices[:, 0] = 7
    learner.randoms.copy_(r)
    snapshot = graph.snapshot(learner)
    for _ in range(3):
        learner._iteration()
    assert learner.nonfinite_counts()["nonfinite_targets"] == 3 * cfg.critic_updates
    graph.restore(learner, snapshot)
    assert learner.nonfinite_counts()["nonfinite_targets"] == 0
    learner.update()
    assert learner.nonfinite_counts()["nonfinite_targets"] == cfg.critic_updates
