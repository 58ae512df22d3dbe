"""FastSACLearner: the update math, and the wrappers that make it fast.

Reading order:
1. `critic_loss`, `actor_loss`, `alpha_loss` and `_iteration` are the whole algorithm:
   plain PyTorch that runs eagerly on CPU (tests) and on CUDA.
2. `draw_randoms` makes every random draw of one iteration (replay indices, noise).
3. Around that, from outside: `torch.compile` of the two loss functions, gradient hooks
   on flat buckets (data-parallel sync), and one CUDA graph holding the whole iteration.

One iteration (`cfg.critic_updates` = 8, `cfg.actor_update_at` = (0, 4)):

    for k in 0..7:
        critic step   each critic's cross-entropy to ITS OWN target net's projected
                      distribution of r + gamma (1 - terminated) (z - alpha log pi(a'|s')),
                      a' ~ pi(.|s') from the current actor
        alpha step    loss -alpha (log pi(a'|s') + target_entropy), with the log-probs of
                      the critic target's a' (so alpha moves after every critic update)
        Polyak        target <- target + tau (online - target)
        if k in (0, 4): actor step   loss alpha log pi(a|s) - mean(Q1, Q2)(s, a), a ~ pi(.|s)
                      on batch k, critics frozen

Every optimizer step: zero the optimizer's flat gradient bucket, backward, run the
gradient hooks on the bucket (`set_gradient_graph_hooks`), AdamW step.

Observation normalisation (`cfg.obs_norm`, off by default): `observe()` puts the
iteration's new rows aside; the iteration then starts by merging their mean and
variance into running statistics, with the hooks run on the packed means first (bucket
"obs_stats": an all-reduce average makes the statistics those of every rank's rows, and
identical on every rank), and sets the actor's and the critic's input normalisers from
them. So it is part of the captured graph, with no host sync; in iterations before
learning starts `observe()` merges eagerly instead.

Parameters and gradients live in flat buffers: the parameters of the actor, of the
critics, of the target critics and log-alpha are views into one flat float32 tensor per
group, and each group's `.grad` is a view into one flat bucket. Each AdamW optimizer owns
the flat tensor itself (AdamW is elementwise, so this is the same update as per-tensor
AdamW), so a step is one fused kernel, Polyak is one `lerp_`, publishing the actor is
one copy and the data-parallel hook sees exactly the optimizer's gradient.

CUDA graph (`cuda_graph=True` on CUDA): on the first `update()`, `graph_warmup_iters`
iterations run eagerly on a side stream (compiling, creating optimizer state, warming up
NCCL through the hooks), then the learning state is RESTORED to what it was before the
warm-up (parameters, targets and log-alpha copied back, AdamW moments and step counts
zeroed, which is exactly their initial state), and one iteration is captured on the
same side stream. Capture records kernels without running them, so after capture the
learner is in its pre-warm-up state and the first replay is the first real update: a
graphed learner follows the same trajectory as an eager one given the same random
numbers. Only the RNG stream position differs (warm-up consumed draws).

With `hooks_in_graph=False` (`sacscale train --allreduce between-graphs`) the same
iteration is captured as a chain of graphs split at every hook call, sharing one memory
pool; update() replays them in order and runs the hooks (the all-reduce) eagerly in
between. Its losses run eagerly: compiled losses in a segmented capture gave wrong
gradients on one H200 machine and right ones on another (docs/faults.md, cause unknown),
and the constructor refuses the combination.

Modules beside this one: `graph` (warm-up, undoing it, capture whole or in segments),
`learning_state` (checkpoint state and back), `flat` (flat parameter buffers, Polyak),
`randoms` (one iteration's random numbers).
"""

from __future__ import annotations

import copy
import logging
import math
import time

import torch
from torch import nn

from sacscale.learn import c51, graph, learning_state
from sacscale.learn.compile_cache import compile_privately
from sacscale.learn.config import SACConfig
from sacscale.learn.flat import FlatParams, polyak_
from sacscale.learn.networks import Actor, DistributionalCritic, ObsNormalizer
from sacscale.learn.normalizer import RunningMeanVar
from sacscale.learn.randoms import Randoms
from sacscale.learn.replay import ReplayBuffer

# Compiled losses inside a segmented capture (hooks_in_graph=False) gave wrong gradients on
# one H200 machine and right ones on another (docs/faults.md, cause unknown): refused until
# the cause is found; the tests that hunt it set this.
COMPILED_SEGMENTS_ALLOWED = False

log = logging.getLogger(__name__)

METRIC_NAMES = ("critic_loss", "actor_loss", "alpha_loss", "alpha", "entropy", "q_mean")
# What a non-finite critic target came from: the row's, the actor's or the target critics' numbers.
TARGET_FAULT_SOURCES = ("reward", "termination", "next_logp", "next_value")


class FastSACLearner:
    def __init__(self, cfg: SACConfig, num_envs: int, device: torch.device | str,
                 compile: bool = True, cuda_graph: bool = True, seed: int = 0,
                 hooks_in_graph: bool = True) -> None:
        self.cfg = cfg
        self.num_envs = int(num_envs)
        self.device = torch.device(device)
        if self.device.type == "cuda" and self.device.index is None:
            self.device = torch.device("cuda", torch.cuda.current_device())
        on_cuda = self.device.type == "cuda"
        self.compiled = bool(compile) and (on_cuda or cfg.compile_on_cpu)
        self.graphed = bool(cuda_graph) and on_cuda
        if not on_cuda and (compile or cuda_graph):
            log.info("FastSACLearner on %s: eager execution (compile=%s, CUDA graph off; "
                     "set cfg.compile_on_cpu to compile on CPU)", self.device, self.compiled)
        if self.compiled and self.graphed and not hooks_in_graph and not COMPILED_SEGMENTS_ALLOWED:
            raise ValueError("compiled losses with the hooks between graph segments (hooks_in_graph=False) "
                             "give wrong gradients (docs/faults.md): pass compile=False")
        if self.graphed and cfg.graph_warmup_iters < 1:
            raise ValueError("graph_warmup_iters must be >= 1 (optimizer state and NCCL "
                             "must exist before capture)")
        self.amp_dtype = cfg.autocast_dtype(self.device)
        self.seed = seed

        # Networks: initialised on CPU from `seed` (same weights on every device and rank,
        # global RNG untouched), then moved and flattened.
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            actor = Actor.from_config(cfg)
            critic = DistributionalCritic.from_config(cfg)
        self.actor = actor.to(self.device)
        self.critic = critic.to(self.device)
        self.target_critic = copy.deepcopy(self.critic).requires_grad_(False)
        self.log_alpha = nn.Parameter(
            torch.full((1,), math.log(cfg.alpha_init), dtype=torch.float32, device=self.device))
        self.flat = {
            "actor": FlatParams(self.actor.parameters(), with_grad=True),
            "critic": FlatParams(self.critic.parameters(), with_grad=True),
            "target_critic": FlatParams(self.target_critic.parameters(), with_grad=False),
            "alpha": FlatParams([self.log_alpha], with_grad=True),
        }
        self.optimizers = {
            "critic": self._adamw(self.flat["critic"].data, cfg.weight_decay),
            "alpha": self._adamw(self.flat["alpha"].data, cfg.alpha_weight_decay),
            "actor": self._adamw(self.flat["actor"].data, cfg.weight_decay),
        }

        self.replay = ReplayBuffer(cfg.replay_capacity(self.num_envs), cfg.actor_obs_dim,
                                   cfg.critic_obs_dim, cfg.action_dim, self.device)
        self.learning_starts = cfg.learning_starts_rows(self.num_envs)
        if self.learning_starts > self.replay.capacity:
            raise ValueError(f"learning starts at {self.learning_starts} rows but the replay holds "
                             f"only {self.replay.capacity} ({cfg.replay_per_env} x {self.num_envs} envs)")
        self.support = c51.make_support(cfg.v_min, cfg.v_max, cfg.num_atoms, self.device)

        # Observation normalisation: running statistics, the rows put aside by observe()
        # and whether they are still to be merged (1.0) or were merged (0.0).
        self.obs_norm = bool(cfg.obs_norm)
        self.critic_norm = ObsNormalizer(cfg.critic_obs_dim).to(self.device) if self.obs_norm else None
        if self.obs_norm:
            self.obs_stats = {"actor_obs": RunningMeanVar(cfg.actor_obs_dim, self.device),
                              "critic_obs": RunningMeanVar(cfg.critic_obs_dim, self.device)}
            self._fresh = {"actor_obs": torch.zeros(self.num_envs, cfg.actor_obs_dim, device=self.device),
                           "critic_obs": torch.zeros(self.num_envs, cfg.critic_obs_dim, device=self.device)}
            self._fresh_pending = torch.zeros((), dtype=torch.float64, device=self.device)
            # per field: sum / num_envs and sum of squares / num_envs over the finite rows;
            # last: the share of rows that were finite
            self._obs_bucket = torch.zeros(2 * (cfg.actor_obs_dim + cfg.critic_obs_dim) + 1, device=self.device)
            self._published = torch.zeros(self.actor.flat_numel(), dtype=torch.float32, device=self.device)

        # Static tensors read and written by the (captured) iteration.
        self.randoms = Randoms.empty(cfg, self.device)
        self._metrics = torch.zeros(len(METRIC_NAMES), dtype=torch.float32, device=self.device)
        # since the start: target rows found non-finite (given no mass), then by TARGET_FAULT_SOURCES
        self._target_faults = torch.zeros(1 + len(TARGET_FAULT_SOURCES), dtype=torch.int64, device=self.device)
        self._external_randoms = False
        self._hooks: list = []
        if on_cuda:
            self._generator = None  # the device's default generator: the only one torch.cuda.graph registers
            torch.cuda.default_generators[self.device.index].manual_seed(seed + 1)
        else:
            self._generator = torch.Generator(device="cpu").manual_seed(seed + 1)

        if self.compiled:
            opts = dict(mode=cfg.compile_mode, fullgraph=True, dynamic=False)
            self._critic_loss_fn = compile_privately(self.critic_loss, **opts)
            self._actor_loss_fn = compile_privately(self.actor_loss, **opts)
        else:
            self._critic_loss_fn = self.critic_loss
            self._actor_loss_fn = self.actor_loss

        self._graph: torch.cuda.CUDAGraph | None = None
        self._stream: torch.cuda.Stream | None = None
        # hooks_in_graph=False: the iteration is captured as segments split at every hook
        # call, and the hooks (the all-reduce) run eagerly between the segments' replays;
        # every other kernel is the same. Measures what capturing the all-reduce gains.
        self.hooks_in_graph = bool(hooks_in_graph)
        self._segments: list[tuple[torch.cuda.CUDAGraph, tuple[str, torch.Tensor] | None]] = []
        self.iterations = 0
        # s: compile + warm-up + capture + first update() of this process
        self.time_to_first_update: float | None = None

    def _adamw(self, flat: torch.Tensor, weight_decay: float) -> torch.optim.AdamW:
        cfg = self.cfg
        if self.device.type == "cuda":
            # fused: one kernel; capturable (graph only): step count on the device; lr a device tensor
            return torch.optim.AdamW([flat], lr=torch.tensor(cfg.lr, device=self.device),
                                     betas=cfg.betas, weight_decay=weight_decay,
                                     fused=True, capturable=self.graphed)
        return torch.optim.AdamW([flat], lr=cfg.lr, betas=cfg.betas, weight_decay=weight_decay,
                                 foreach=False)

    def _autocast(self):
        return torch.autocast(self.device.type, dtype=self.amp_dtype or torch.bfloat16,
                              enabled=self.amp_dtype is not None)

    # ------------------------------------------------------------------ the math
    def critic_loss(self, indices: torch.Tensor, target_noise: torch.Tensor):
        """Twin C51 critic loss on batch `indices`. Returns (loss, next_logp (B,), q_mean,
        the counts of rows whose target was not finite: all, then by TARGET_FAULT_SOURCES)."""
        cfg = self.cfg
        b = self.replay.gather(indices)
        with torch.no_grad():
            with self._autocast():
                next_action, next_logp = self.actor(b["next_actor_obs"], target_noise)
                target_logits1, target_logits2 = self.target_critic(self._critic_in(b["next_critic_obs"]), next_action)
            alpha = self.log_alpha.exp()
            discount = cfg.gamma * (1.0 - b["terminated"])
            # soft value: Z(s', a') - alpha log pi(a'|s'), folded into the shifted reward
            soft_reward = b["reward"] - discount * alpha * next_logp
            next_probs1, next_probs2 = [torch.softmax(t.float(), -1) for t in (target_logits1, target_logits2)]
            target1, invalid1 = c51.project(next_probs1, soft_reward, discount, cfg.v_min, cfg.v_max,
                                            return_invalid=True)
            target2, invalid2 = c51.project(next_probs2, soft_reward, discount, cfg.v_min, cfg.v_max,
                                            return_invalid=True)
            faults = torch.stack([invalid1 | invalid2, ~torch.isfinite(b["reward"]), ~torch.isfinite(b["terminated"]),
                                  ~torch.isfinite(next_logp),
                                  ~(torch.isfinite(next_probs1).all(-1) & torch.isfinite(next_probs2).all(-1))]).sum(-1)
        with self._autocast():
            logits1, logits2 = self.critic(self._critic_in(b["critic_obs"]), b["action"])
        loss = c51.cross_entropy(logits1, target1).mean() + c51.cross_entropy(logits2, target2).mean()
        with torch.no_grad():
            q_mean = 0.5 * (c51.expected_value(logits1, self.support)
                            + c51.expected_value(logits2, self.support)).mean()
        return loss, next_logp, q_mean, faults

    def actor_loss(self, indices: torch.Tensor, noise: torch.Tensor):
        """alpha log pi(a|s) - mean(Q1, Q2)(s, a). Call with the critics frozen.
        Returns (loss, logp (B,) detached)."""
        b = self.replay.gather(indices)
        with self._autocast():
            action, logp = self.actor(b["actor_obs"], noise)
            logits1, logits2 = self.critic(self._critic_in(b["critic_obs"]), action)
        q = 0.5 * (c51.expected_value(logits1, self.support) + c51.expected_value(logits2, self.support))
        alpha = self.log_alpha.detach().exp()
        loss = (alpha * logp - q).mean()
        return loss, logp.detach()

    def _critic_in(self, critic_obs: torch.Tensor) -> torch.Tensor:
        """The critics' (online and target) observation input; the actor normalises its own."""
        return critic_obs if self.critic_norm is None else self.critic_norm(critic_obs)

    def alpha_loss(self, logp: torch.Tensor) -> torch.Tensor:
        return -(self.log_alpha.exp() * (logp.detach() + self.cfg.target_entropy)).mean()

    def _optimizer_step(self, name: str, loss: torch.Tensor) -> None:
        grad = self.flat[name].grad
        grad.zero_()                       # keep the views: never set grads to None
        loss.backward()
        for hook in self._hooks:
            hook(name, grad)               # e.g. in-place all-reduce (average) across ranks
        self.optimizers[name].step()

    def _iteration(self) -> None:
        """One learner iteration; no host syncs (it is what the CUDA graph captures)."""
        cfg = self.cfg
        if self.obs_norm:
            self._merge_fresh_obs()
        r = self.randoms if self._external_randoms else self.draw_randoms()
        indices = self.replay.usable(r.indices)  # draws of dropped (non-finite) rows go to a valid row
        critic_losses, alpha_losses, actor_losses, actor_logps, q_means = [], [], [], [], []
        actor_slot = 0
        for k in range(cfg.critic_updates):
            loss, next_logp, q_mean, faults = self._critic_loss_fn(indices[k], r.target_noise[k])
            self._target_faults.add_(faults)
            self._optimizer_step("critic", loss)
            a_loss = self.alpha_loss(next_logp)
            self._optimizer_step("alpha", a_loss)
            polyak_(self.flat["target_critic"].data, self.flat["critic"].data, cfg.tau)
            critic_losses.append(loss.detach())
            alpha_losses.append(a_loss.detach())
            q_means.append(q_mean)
            if k in cfg.actor_update_at:
                self.critic.requires_grad_(False)
                try:
                    p_loss, logp = self._actor_loss_fn(indices[k], r.actor_noise[actor_slot])
                    self._optimizer_step("actor", p_loss)
                finally:
                    self.critic.requires_grad_(True)
                actor_losses.append(p_loss.detach())
                actor_logps.append(logp.mean())
                actor_slot += 1
        zero = torch.zeros((), device=self.device)
        mean = lambda xs: torch.stack(xs).mean() if xs else zero  # noqa: E731
        self._metrics.copy_(torch.stack([
            mean(critic_losses), mean(actor_losses), mean(alpha_losses),
            self.log_alpha.detach().exp()[0], -mean(actor_logps), mean(q_means),
        ]))

    # ------------------------------------------------------------------ observation statistics
    def observe(self, actor_obs: torch.Tensor, critic_obs: torch.Tensor) -> None:
        """Hand the rows just added to the replay to the normaliser (no-op without
        `cfg.obs_norm`). Their statistics are merged by the next update(), or right away
        while learning has not started (no update will run this iteration)."""
        if not self.obs_norm:
            return
        self._fresh["actor_obs"].copy_(actor_obs, non_blocking=True)
        self._fresh["critic_obs"].copy_(critic_obs, non_blocking=True)
        self._fresh_pending.fill_(1.0)
        if not self.ready():
            self._merge_fresh_obs()

    @torch.no_grad()
    def _merge_fresh_obs(self) -> None:
        """Merge the pending rows (if any: weight 0 otherwise) into the statistics, over all
        ranks through the hooks, and set the normalisers. No host sync.

        Rows with a non-finite actor or critic observation (the replay drops them) are left
        out: one NaN would make the statistics, and every normalised input, NaN. The bucket
        holds sums over the finite rows and their share, each divided by num_envs, so the
        all-reduce average gives the exact statistics of every rank's finite rows however
        many each rank dropped."""
        bucket = self._obs_bucket
        finite = (torch.isfinite(self._fresh["actor_obs"]).all(1)
                  & torch.isfinite(self._fresh["critic_obs"]).all(1)).unsqueeze(1)
        parts, offset = [], 0
        for name in ("actor_obs", "critic_obs"):
            x, dim = torch.where(finite, self._fresh[name], 0.0), self._fresh[name].shape[1]
            bucket[offset:offset + dim].copy_(x.mean(0))
            bucket[offset + dim:offset + 2 * dim].copy_(x.square().mean(0))
            parts.append((name, offset, dim))
            offset += 2 * dim
        bucket[offset].copy_(finite.float().mean())
        for hook in self._hooks:
            hook("obs_stats", bucket)  # all-reduce average: the means of every rank's rows
        share = bucket[offset]  # of the rows, those finite (every rank's)
        rows = self._fresh_pending * self.num_envs * share.double()  # per rank; equal on every rank
        for name, offset, dim in parts:
            safe = share.clamp(min=1.0 / self.num_envs)  # no finite row: 0 rows merged, mean 0
            mean, mean_sq = bucket[offset:offset + dim] / safe, bucket[offset + dim:offset + 2 * dim] / safe
            self.obs_stats[name].merge_(mean, (mean_sq - mean.square()).clamp(min=0.0), rows)
        self._fresh_pending.zero_()
        self._refresh_normalizers()

    @torch.no_grad()
    def _refresh_normalizers(self) -> None:
        eps = self.cfg.obs_norm_eps
        for norm, stats in ((self.actor.obs_norm, self.obs_stats["actor_obs"]),
                            (self.critic_norm, self.obs_stats["critic_obs"])):
            norm.shift.copy_(stats.mean)
            norm.scale.copy_(stats.scale(eps))

    # ------------------------------------------------------------------ randoms
    def draw_randoms(self) -> Randoms:
        """Draw all random numbers of one iteration into the static `self.randoms`.

        Replay indices are uniform over the rows held, using the DEVICE-side size, so the
        draw is valid inside a CUDA graph while the buffer grows (2^62 % size bias is nil).
        """
        r, gen = self.randoms, self._generator
        torch.randint(0, 2**62, r.indices.shape, generator=gen, device=self.device,
                      dtype=torch.int64, out=r.indices)
        r.indices.remainder_(self.replay.size_t.clamp(min=1))
        r.target_noise.normal_(generator=gen)
        r.actor_noise.normal_(generator=gen)
        return r

    def use_external_randoms(self) -> Randoms:
        """Switch to caller-provided random numbers: before each `update()`, fill the
        returned static buffers in place (e.g. `learner.randoms.copy_(r)`). Must be
        called before the first update (the graph captures the choice)."""
        if self._graph is not None:
            raise RuntimeError("use_external_randoms() must be called before the first update()")
        self._external_randoms = True
        return self.randoms

    # ------------------------------------------------------------------ hooks
    def set_gradient_graph_hooks(self, hooks) -> None:
        """Install `hook(name, flat_grad)` callables, run in order on the flat gradient bucket
        of optimizer `name` ('critic', 'alpha', 'actor') after each backward and before
        each optimizer step; they must work in place. With a CUDA graph they run eagerly
        in warm-up (on the capture stream) and are then captured, so install them before
        the first update()."""
        if self._graph is not None:
            raise RuntimeError("gradient hooks must be set before the first update() "
                               "(the CUDA graph is captured then)")
        self._hooks = list(hooks)

    # ------------------------------------------------------------------ running
    def ready(self) -> bool:
        return self.replay.size >= self.learning_starts

    def update(self) -> None:
        """One iteration: cfg.critic_updates critic+alpha updates, cfg.actor_updates actor updates."""
        if self.replay.size == 0:
            raise RuntimeError("update() on an empty replay buffer")
        first = self.time_to_first_update is None  # this process's first: a resumed learner compiles and captures too
        t0 = time.perf_counter()
        if self.graphed:
            if self._graph is None:
                self._stream, self._graph, self._segments = graph.capture(self)
            if self._segments:
                for segment, hook_point in self._segments:
                    segment.replay()
                    if hook_point is not None:
                        for hook in self._hooks:
                            hook(*hook_point)
            else:
                self._graph.replay()
        else:
            self._iteration()
        if first:
            if self.device.type == "cuda":
                torch.cuda.synchronize(self.device)
            self.time_to_first_update = time.perf_counter() - t0
        self.iterations += 1

    # ------------------------------------------------------------------ checkpoints
    def learning_state(self, with_replay: bool = False) -> dict:
        """Everything a resumed learner needs to continue this one (CPU copies): state
        tensors, AdamW state, the random stream, the iteration count, the normaliser's
        pending rows, and (optionally; about 1.8 GB at 2048 envs) the replay buffer."""
        return learning_state.save(self, with_replay)

    def load_learning_state(self, state: dict) -> None:
        """Continue from `learning_state()` (before the first update: the graph is
        captured from this state)."""
        learning_state.load(self, state)

    # ------------------------------------------------------------------ outputs
    def metrics(self) -> dict[str, float]:
        """Means over the last iteration's updates (host sync)."""
        return dict(zip(METRIC_NAMES, self._metrics.tolist()))

    def nonfinite_counts(self) -> dict[str, int]:
        """Since this learner started (host sync: call at log time): `nonfinite_rows`,
        transitions the replay dropped as non-finite; `nonfinite_targets`, critic targets
        the C51 projection found non-finite (none while the replay drops such rows, unless
        the networks themselves produce NaN)."""
        rows, targets = torch.stack([self.replay.nonfinite_rows, self._target_faults[0]]).tolist()
        return {"nonfinite_rows": int(rows), "nonfinite_targets": int(targets)}

    def nonfinite_target_sources(self) -> dict[str, int]:
        """The non-finite critic targets by what was not finite; a row counts in each (host sync)."""
        return dict(zip(TARGET_FAULT_SOURCES, self._target_faults[1:].tolist()))

    def actor_flat(self, out: torch.Tensor | None = None) -> torch.Tensor:
        """The policy as one flat float32 vector (`Actor.flat_parameters()` layout: the
        parameters in `parameters()` order, then the observation normaliser if any).

        Without `out`: without normalisation the learner's LIVE flat buffer (no copy;
        read-only; the next update() changes it, stream-ordered), with it a copy into a
        static buffer. With `out` (e.g. a pinned CPU tensor): copied into it, non-blocking
        when `out` is pinned (synchronise before reading it).
        """
        flat = self.flat["actor"].data.detach()
        if self.obs_norm:
            n, norm = flat.numel(), self.actor.obs_norm
            self._published[:n].copy_(flat)
            self._published[n:n + norm.shift.numel()].copy_(norm.shift)
            self._published[n + norm.shift.numel():].copy_(norm.scale)
            flat = self._published
        if out is None:
            return flat
        return out.copy_(flat, non_blocking=out.device.type == "cpu" and out.is_pinned())

    def state_tensors(self) -> dict[str, torch.Tensor]:
        """The live tensors that define the learning state at start (broadcast them in
        place from rank 0): flat actor, critic and target-critic parameters, log-alpha,
        and with observation normalisation its statistics and the normalisers set from
        them. AdamW state is zero-initialised identically everywhere and is not included.
        Their names are sacscale.learn.state_names's (torch-free: verify reads them)."""
        state = {
            "actor": self.flat["actor"].data,
            "critic": self.flat["critic"].data,
            "target_critic": self.flat["target_critic"].data,
            "log_alpha": self.flat["alpha"].data,
        }
        if self.obs_norm:
            for name, stats in self.obs_stats.items():
                state.update(stats.tensors(name))
            state.update(actor_obs_shift=self.actor.obs_norm.shift, actor_obs_scale=self.actor.obs_norm.scale,
                         critic_obs_shift=self.critic_norm.shift, critic_obs_scale=self.critic_norm.scale)
        return state

    def close(self) -> None:
        """Drop the CUDA graph (call before destroying the process group)."""
        if self._graph is not None:
            torch.cuda.synchronize(self.device)
            for segment, _ in self._segments[1:]:
                segment.reset()
            self._graph.reset()
            self._graph = None
            self._segments = []
        self._stream = None


__all__ = ["FastSACLearner", "Randoms", "FlatParams", "polyak_", "METRIC_NAMES"]
