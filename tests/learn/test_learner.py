import threading

import pytest
import torch

from sacscale.learn import graph
from sacscale.learn.config import SACConfig
from sacscale.learn.learner import METRIC_NAMES, FastSACLearner, Randoms, polyak_
from sacscale.learn.networks import Actor


def assert_states_equal(a: dict, b: dict):
    for name in a:
        assert torch.equal(a[name], b[name]), name


# ---------------------------------------------------------------- config
def test_reference_config():
    cfg = SACConfig()
    assert (cfg.gamma, cfg.tau, cfg.lr, cfg.betas, cfg.weight_decay) == (0.97, 0.125, 3e-4, (0.9, 0.95), 1e-3)
    assert (cfg.alpha_init, cfg.target_entropy, cfg.alpha_weight_decay) == (0.001, 0.0, 0.0)
    assert (cfg.critic_updates, cfg.actor_update_at, cfg.batch_size) == (8, (0, 4), 8192)
    assert (cfg.num_atoms, cfg.v_min, cfg.v_max) == (101, -20.0, 20.0)
    assert (cfg.actor_obs_dim, cfg.critic_obs_dim, cfg.action_dim) == (98, 101, 29)
    assert cfg.replay_capacity(2048) == 1_048_576
    assert cfg.learning_starts_rows(2048) == 20480 and cfg.learning_starts_rows(16) == 8192
    assert cfg.autocast_dtype("cpu") is None and cfg.autocast_dtype("cuda") == torch.bfloat16
    assert SACConfig(amp_dtype="float32").autocast_dtype("cuda") is None


@pytest.mark.parametrize("bad", [dict(actor_update_at=(8,)), dict(compile_mode="reduce-overhead"),
                                 dict(amp_dtype="fp8"), dict(v_min=1.0, v_max=0.0)])
def test_bad_config_rejected(bad):
    with pytest.raises(ValueError):
        SACConfig(**bad)


# ---------------------------------------------------------------- Polyak
def test_polyak_exact():
    # dyadic values: every intermediate is exact in float32, so equality must be exact
    g = torch.Generator().manual_seed(0)
    target = torch.randint(-64, 64, (1000,), generator=g).float()
    online = torch.randint(-64, 64, (1000,), generator=g).float()
    expected = 0.875 * target + 0.125 * online
    polyak_(target, online, 0.125)
    assert torch.equal(target, expected)
    target, online = torch.randn(1000, generator=g), torch.randn(1000, generator=g)
    expected = 0.875 * target + 0.125 * online
    polyak_(target, online, 0.125)
    torch.testing.assert_close(target, expected, atol=3e-7, rtol=0)


@pytest.mark.parametrize("tau", [0.0, 1.0])
def test_polyak_in_learner(learn, tau):
    learner = learn.make_learner(learn.small_cfg(tau=tau))
    before = learn.state(learner)
    learner.update()
    after = learn.state(learner)
    if tau == 1.0:
        assert torch.equal(after["target_critic"], after["critic"])
    else:
        assert torch.equal(after["target_critic"], before["target_critic"])
    assert not torch.equal(after["critic"], before["critic"])


# ---------------------------------------------------------------- learning
def test_critic_loss_falls_on_a_fixed_batch(learn):
    """Terminal transitions: the projected targets are fixed two-atom distributions at r,
    so the cross-entropy can fall far below its start (~2 log(num_atoms))."""
    cfg = learn.small_cfg(lr=1e-3)
    learner = FastSACLearner(cfg, learn.NUM_ENVS, "cpu")
    data = learn.transitions(cfg=cfg)
    data["terminated"][:] = True
    learner.replay.add(**data)
    learner.use_external_randoms().copy_(learn.random_randoms(cfg, learn.ROWS, seed=1))  # same batch
    losses = []
    for _ in range(7):  # 56 critic updates
        learner.update()
        losses.append(learner.metrics()["critic_loss"])
    assert all(b < a for a, b in zip(losses, losses[1:])), losses
    assert losses[-1] < 0.6 * losses[0], losses


def test_metrics(learn):
    learner = learn.make_learner()
    learner.update()
    m = learner.metrics()
    assert list(m) == list(METRIC_NAMES)
    assert all(isinstance(v, float) and v == v for v in m.values())
    assert m["alpha"] == pytest.approx(float(learner.log_alpha.detach().exp()), rel=1e-6)
    # entropy of the zero-init actor: 29 dims of a Gaussian with log-std -2.5 (tanh barely bends it)
    assert m["entropy"] == pytest.approx(29 * (0.5 * (1 + torch.log(torch.tensor(2 * torch.pi)).item()) - 2.5), abs=1.0)


def test_update_on_empty_replay_raises(learn):
    learner = FastSACLearner(learn.small_cfg(), learn.NUM_ENVS, "cpu")
    assert not learner.ready()
    with pytest.raises(RuntimeError, match="empty"):
        learner.update()


def test_ready_threshold(learn):
    learner = learn.make_learner(learn.small_cfg(learning_starts=250))
    assert learner.learning_starts == 250 and not learner.ready()
    learner.replay.add(**learn.transitions(100))
    assert learner.ready()


# ---------------------------------------------------------------- gradient buckets and hooks
def test_hooks_run_on_flat_buckets_before_each_step(learn):
    cfg = learn.small_cfg()
    learner = learn.make_learner(cfg)
    calls = []

    def hook(name, flat):
        assert flat is learner.flat[name].grad
        assert all(f.views_intact() for f in learner.flat.values())
        calls.append((name, flat.abs().sum().item()))

    learner.set_gradient_graph_hooks([hook])
    learner.update()
    expected = []
    for k in range(cfg.critic_updates):
        expected += ["critic", "alpha"] + (["actor"] if k in cfg.actor_update_at else [])
    assert [name for name, _ in calls] == expected
    assert all(norm > 0 for _, norm in calls)  # backward has filled the bucket when the hook runs


def test_zero_grad_hook_freezes_parameters(learn):
    """A hook scaling the buckets by 0 must freeze everything: it acts before the steps.
    (Weight decay is off: decoupled decay moves parameters even with zero gradients.)"""
    cfg = learn.small_cfg(weight_decay=0.0)
    frozen, control = learn.make_learner(cfg), learn.make_learner(cfg)
    frozen.set_gradient_graph_hooks([lambda name, flat: flat.mul_(0.0)])
    before = learn.state(frozen)
    for learner in (frozen, control):
        learner.update()
        learner.update()
    assert_states_equal(learn.state(frozen), before)
    changed = learn.state(control)
    assert all(not torch.equal(changed[k], before[k]) for k in before)


def test_grad_views_survive_updates(learn):
    learner = learn.make_learner()
    for _ in range(2):
        learner.update()
    assert all(f.views_intact() for f in learner.flat.values())
    bucket = learner.flat["critic"].grad
    end = bucket.data_ptr() + bucket.numel() * bucket.element_size()
    for p in learner.critic.parameters():
        assert bucket.data_ptr() <= p.grad.data_ptr() < end
    assert learner.flat["critic"].data.grad is bucket  # the optimizer steps with the bucket itself


# ---------------------------------------------------------------- randoms
def test_draw_randoms_uses_the_device_side_size(learn):
    cfg = learn.small_cfg()
    learner = learn.make_learner(cfg, rows=10)
    r = learner.draw_randoms()
    assert r is learner.randoms
    assert r.indices.shape == (cfg.critic_updates, cfg.batch_size) and r.indices.dtype == torch.int64
    assert int(r.indices.min()) >= 0 and int(r.indices.max()) < 10
    assert r.target_noise.shape == (8, 32, 29) and r.actor_noise.shape == (2, 32, 29)
    first = r.indices.clone()
    learner.replay.add(**learn.transitions(200))
    r = learner.draw_randoms()
    assert not torch.equal(first, r.indices)
    assert int(r.indices.max()) >= 10 and int(r.indices.max()) < 210
    noise = torch.cat([r.target_noise.flatten(), r.actor_noise.flatten()])
    assert abs(noise.mean().item()) < 0.1 and abs(noise.std().item() - 1) < 0.1


def test_external_randoms_reproduce_exactly(learn):
    cfg = learn.small_cfg()
    a, b, c = (learn.make_learner(cfg, external=True) for _ in range(3))
    for it in range(3):
        r = learn.random_randoms(cfg, learn.ROWS, seed=10 + it)
        a.randoms.copy_(r)
        b.randoms.copy_(r)
        c.randoms.copy_(learn.random_randoms(cfg, learn.ROWS, seed=99 + it))
        for learner in (a, b, c):
            learner.update()
        assert a.metrics() == b.metrics()
    assert_states_equal(learn.state(a), learn.state(b))
    assert not torch.equal(learn.state(a)["critic"], learn.state(c)["critic"])


def test_randoms_concat_and_chunk_round_trip(learn):
    cfg = learn.small_cfg()
    r = learn.random_randoms(cfg, learn.ROWS, seed=3, batch_size=64)
    parts = r.chunk(2)
    assert parts[0].indices.shape == (8, 32)
    joined = Randoms.concat(parts)
    assert all(torch.equal(x, y) for x, y in zip(joined.tensors(), r.tensors()))


# ---------------------------------------------------------------- data parallel
class ThreadAllReduce:
    """In-place average of a bucket over `world` threads (a stand-in for NCCL/gloo)."""

    def __init__(self, world: int):
        self.world, self.barrier, self.slots = world, threading.Barrier(world, timeout=60), [None] * world

    def hook(self, rank: int):
        def average(name, flat):
            self.slots[rank] = flat.clone()
            self.barrier.wait()
            mean = sum(self.slots) / self.world  # same order on every rank: identical results
            self.barrier.wait()
            flat.copy_(mean)
        return average


def test_two_ranks_match_one_learner_on_the_concatenated_batch(learn):
    """The data-parallel contract: ranks with batch B whose hooks average the gradients
    follow one learner with batch 2B on the concatenated indices and noise."""
    b = 16
    rank_cfg, ref_cfg = learn.small_cfg(batch_size=b), learn.small_cfg(batch_size=2 * b)
    ranks = [learn.make_learner(rank_cfg, external=True) for _ in range(2)]
    reference = learn.make_learner(ref_cfg, external=True)
    allreduce = ThreadAllReduce(2)
    for rank, learner in enumerate(ranks):
        learner.set_gradient_graph_hooks([allreduce.hook(rank)])

    for it in range(3):
        r = learn.random_randoms(ref_cfg, learn.ROWS, seed=20 + it)
        reference.randoms.copy_(r)
        for learner, part in zip(ranks, r.chunk(2)):
            learner.randoms.copy_(part)
        errors = []

        def run(learner, errors=errors):
            try:
                learner.update()
            except Exception as exc:  # surfaced below
                errors.append(exc)
                allreduce.barrier.abort()

        threads = [threading.Thread(target=run, args=(learner,)) for learner in ranks]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        reference.update()

    s0, s1, ref = (learn.state(x) for x in (*ranks, reference))
    assert_states_equal(s0, s1)  # ranks stay bitwise identical
    init = learn.state(learn.make_learner(ref_cfg))
    for name in ref:
        moved = (ref[name] - init[name]).abs().max().item()
        assert moved > 1e-4, f"{name} did not train"
        torch.testing.assert_close(s0[name], ref[name], atol=1e-5, rtol=0, msg=name)


def test_two_ranks_without_sync_do_not_match(learn):
    """Control for the test above: without averaging the ranks drift apart."""
    b = 16
    ranks = [learn.make_learner(learn.small_cfg(batch_size=b), external=True) for _ in range(2)]
    r = learn.random_randoms(learn.small_cfg(batch_size=2 * b), learn.ROWS, seed=20)
    for learner, part in zip(ranks, r.chunk(2)):
        learner.randoms.copy_(part)
        learner.update()
    assert (learn.state(ranks[0])["critic"] - learn.state(ranks[1])["critic"]).abs().max() > 1e-4


# ---------------------------------------------------------------- warm-up restore, state, publishing
def test_restore_after_warmup_gives_the_fresh_trajectory(learn):
    """What the CUDA path does around capture: warm-up iterations, then restore. The next
    iteration must equal a fresh learner's first iteration exactly."""
    cfg = learn.small_cfg()
    warmed, fresh = learn.make_learner(cfg, external=True), learn.make_learner(cfg, external=True)
    snapshot = graph.snapshot(warmed)
    warmed.randoms.copy_(learn.random_randoms(cfg, learn.ROWS, seed=5))
    for _ in range(3):
        warmed._iteration()
    assert not torch.equal(learn.state(warmed)["actor"], snapshot["tensors"]["actor"])
    graph.restore(warmed, snapshot)
    for it in range(2):
        r = learn.random_randoms(cfg, learn.ROWS, seed=40 + it)
        for learner in (warmed, fresh):
            learner.randoms.copy_(r)
            learner.update()
    assert_states_equal(learn.state(warmed), learn.state(fresh))


def test_state_tensors_are_live_and_complete(learn):
    learner = learn.make_learner()
    tensors = learner.state_tensors()
    assert set(tensors) == {"actor", "critic", "target_critic", "log_alpha"}
    n_params = lambda m: sum(p.numel() for p in m.parameters())  # noqa: E731
    assert tensors["actor"].numel() == n_params(learner.actor)
    assert tensors["critic"].numel() == tensors["target_critic"].numel() == n_params(learner.critic)
    assert torch.equal(tensors["critic"], tensors["target_critic"])  # targets start as copies
    tensors["log_alpha"].fill_(0.0)  # in place, as a broadcast would
    assert float(learner.log_alpha.detach()) == 0.0
    tensors["actor"].zero_()
    assert all(torch.all(p == 0) for p in learner.actor.parameters())


def test_same_seed_same_init_different_seed_different_init(learn):
    a, b, c = (FastSACLearner(learn.small_cfg(), learn.NUM_ENVS, "cpu", seed=s) for s in (0, 0, 1))
    assert_states_equal(learn.state(a), learn.state(b))
    assert not torch.equal(learn.state(a)["critic"], learn.state(c)["critic"])


def test_actor_flat_publishes_to_a_cpu_actor(learn):
    cfg = learn.small_cfg()
    learner = learn.make_learner(cfg)
    learner.update()
    flat = learner.actor_flat()
    assert flat.dtype == torch.float32 and flat.shape == (learner.actor.flat_numel(),)
    torch.testing.assert_close(flat, learner.actor.flat_parameters(), rtol=0, atol=0)
    out = torch.empty_like(flat)
    assert learner.actor_flat(out=out) is out and torch.equal(out, flat)
    collector_actor = Actor.from_config(cfg)
    collector_actor.load_flat(out)
    obs, noise = torch.randn(5, cfg.actor_obs_dim), torch.randn(5, cfg.action_dim)
    torch.testing.assert_close(collector_actor.act(obs, noise), learner.actor.act(obs, noise), rtol=0, atol=0)


def test_cpu_ignores_graph_flags(learn):
    learner = FastSACLearner(learn.small_cfg(), learn.NUM_ENVS, "cpu", compile=True, cuda_graph=True)
    assert not learner.compiled and not learner.graphed


@pytest.mark.slow
def test_compiled_matches_eager_on_cpu(learn):
    """Inductor (CPU) compiles the same loss functions (fullgraph: the whole loss traced,
    functionalised and lowered) and gives the same state. Its C++ kernels are scalar here:
    SIMD codegen probes the CPU's instruction sets and compiles more (measured: 72 -> 51 s
    of CPU), and what is checked is our losses under compile, not Inductor's vectoriser.
    Compiled in this process: a pool of compile workers, each importing torch, costs
    more than it saves on 2 cores (measured: 54 -> 37 s)."""
    import torch._inductor.config as inductor

    cfg = learn.small_cfg(compile_on_cpu=True)
    compiled, eager = learn.make_learner(cfg, external=True), learn.make_learner(cfg, external=True, compile=False)
    assert compiled.compiled and not eager.compiled
    with inductor.patch({"cpp.vec_isa_ok": False, "compile_threads": 1}):  # compiled at the first update()
        for it in range(2):
            r = learn.random_randoms(cfg, learn.ROWS, seed=60 + it)
            for learner in (compiled, eager):
                learner.randoms.copy_(r)
                learner.update()
    a, b = learn.state(compiled), learn.state(eager)
    for name in a:
        torch.testing.assert_close(a[name], b[name], atol=1e-5, rtol=0, msg=name)


def test_learning_start_beyond_capacity_rejected(learn):
    with pytest.raises(ValueError, match="learning starts"):
        FastSACLearner(learn.small_cfg(learning_starts=257), learn.NUM_ENVS, "cpu")
