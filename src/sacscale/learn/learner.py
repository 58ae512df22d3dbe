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
"""

from __future__ import annotations

import copy
import logging
import math
import time
import warnings
from dataclasses import dataclass

import torch
from torch import nn

from sacscale.learn import c51
from sacscale.learn.config import SACConfig
from sacscale.learn.networks import Actor, DistributionalCritic
from sacscale.learn.replay import ReplayBuffer

log = logging.getLogger(__name__)

METRIC_NAMES = ("critic_loss", "actor_loss", "alpha_loss", "alpha", "entropy", "q_mean")
BUCKET_NAMES = ("critic", "alpha", "actor")


@dataclass
class Randoms:
    """Every random number of one iteration (U critic updates, P actor updates, batch B)."""

    indices: torch.Tensor        # (U, B) int64 replay rows of each critic update's batch
    target_noise: torch.Tensor   # (U, B, A) standard normal: a' ~ pi(.|s') in the critic target
    actor_noise: torch.Tensor    # (P, B, A) standard normal: a ~ pi(.|s) in the actor updates

    @classmethod
    def empty(cls, cfg: SACConfig, device, batch_size: int | None = None) -> "Randoms":
        b = cfg.batch_size if batch_size is None else batch_size
        u, p, a = cfg.critic_updates, cfg.actor_updates, cfg.action_dim
        return cls(
            indices=torch.zeros(u, b, dtype=torch.int64, device=device),
            target_noise=torch.zeros(u, b, a, dtype=torch.float32, device=device),
            actor_noise=torch.zeros(p, b, a, dtype=torch.float32, device=device),
        )

    def tensors(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return self.indices, self.target_noise, self.actor_noise

    def copy_(self, other: "Randoms") -> "Randoms":
        for dst, src in zip(self.tensors(), other.tensors()):
            dst.copy_(src)
        return self

    def clone(self) -> "Randoms":
        return Randoms(*(t.clone() for t in self.tensors()))

    def to(self, device) -> "Randoms":
        return Randoms(*(t.to(device) for t in self.tensors()))

    @classmethod
    def concat(cls, parts: list["Randoms"]) -> "Randoms":
        """Join along the batch dimension: rank r's batch is block r of the result."""
        return cls(*(torch.cat(ts, dim=1) for ts in zip(*(p.tensors() for p in parts))))

    def chunk(self, n: int) -> list["Randoms"]:
        """Split along the batch dimension into n equal parts (inverse of concat)."""
        return [Randoms(*ts) for ts in zip(*(t.chunk(n, dim=1) for t in self.tensors()))]


class FlatParams:
    """Re-home `params` into one flat float32 buffer (`data`); optionally give them one
    flat gradient bucket (`grad`). Each parameter's `.data` (and `.grad`) becomes a view
    of the flat tensor, so in-place updates of the flat tensor are seen by the modules
    and backward accumulates straight into the bucket. Move modules to their device
    BEFORE flattening (`.to()` would replace the views)."""

    def __init__(self, params, with_grad: bool) -> None:
        self.params = list(params)
        if not self.params:
            raise ValueError("no parameters to flatten")
        device = self.params[0].device
        if any(p.dtype != torch.float32 or p.device != device for p in self.params):
            raise ValueError("flat parameters must be float32 on one device")
        total = sum(p.numel() for p in self.params)
        self.data = torch.empty(total, dtype=torch.float32, device=device)
        self.grad = torch.zeros(total, dtype=torch.float32, device=device) if with_grad else None
        offset = 0
        with torch.no_grad():
            for p in self.params:
                n = p.numel()
                self.data[offset:offset + n].copy_(p.reshape(-1))
                p.data = self.data[offset:offset + n].view_as(p)
                if with_grad:
                    p.grad = self.grad[offset:offset + n].view_as(p)
                offset += n
        if with_grad:
            self.data.grad = self.grad  # the optimizer steps the flat tensor itself

    def views_intact(self) -> bool:
        """True while every parameter's data (and grad) still views the flat tensors."""
        def inside(t, flat):
            if t is None or flat is None:
                return t is None and flat is None
            start = flat.data_ptr()
            end = start + flat.numel() * flat.element_size()
            return start <= t.data_ptr() < end
        return all(inside(p.data, self.data) and inside(p.grad, self.grad) for p in self.params)


def polyak_(target: torch.Tensor, online: torch.Tensor, tau: float) -> None:
    """target <- (1 - tau) target + tau online, in place."""
    target.lerp_(online, tau)


class FastSACLearner:
    def __init__(self, cfg: SACConfig, num_envs: int, device: torch.device | str,
                 compile: bool = True, cuda_graph: bool = True, seed: int = 0) -> None:
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

        # Static tensors read and written by the (captured) iteration.
        self.randoms = Randoms.empty(cfg, self.device)
        self._metrics = torch.zeros(len(METRIC_NAMES), dtype=torch.float32, device=self.device)
        self._external_randoms = False
        self._hooks: list = []
        if on_cuda:
            self._generator = None  # the device's default generator: the only one torch.cuda.graph registers
            torch.cuda.default_generators[self.device.index].manual_seed(seed + 1)
        else:
            self._generator = torch.Generator(device="cpu").manual_seed(seed + 1)

        if self.compiled:
            opts = dict(mode=cfg.compile_mode, fullgraph=True, dynamic=False)
            self._critic_loss_fn = torch.compile(self.critic_loss, **opts)
            self._actor_loss_fn = torch.compile(self.actor_loss, **opts)
        else:
            self._critic_loss_fn = self.critic_loss
            self._actor_loss_fn = self.actor_loss

        self._graph: torch.cuda.CUDAGraph | None = None
        self._stream: torch.cuda.Stream | None = None
        self.iterations = 0
        self.time_to_first_update: float | None = None  # s: compile + warm-up + capture + first iteration

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
        """Twin C51 critic loss on batch `indices`. Returns (loss, next_logp (B,), q_mean)."""
        cfg = self.cfg
        b = self.replay.gather(indices)
        with torch.no_grad():
            with self._autocast():
                next_action, next_logp = self.actor(b["next_actor_obs"], target_noise)
                target_logits1, target_logits2 = self.target_critic(b["next_critic_obs"], next_action)
            alpha = self.log_alpha.exp()
            discount = cfg.gamma * (1.0 - b["terminated"])
            # soft value: Z(s', a') - alpha log pi(a'|s'), folded into the shifted reward
            soft_reward = b["reward"] - discount * alpha * next_logp
            target1 = c51.project(torch.softmax(target_logits1.float(), -1), soft_reward, discount,
                                  cfg.v_min, cfg.v_max)
            target2 = c51.project(torch.softmax(target_logits2.float(), -1), soft_reward, discount,
                                  cfg.v_min, cfg.v_max)
        with self._autocast():
            logits1, logits2 = self.critic(b["critic_obs"], b["action"])
        loss = c51.cross_entropy(logits1, target1).mean() + c51.cross_entropy(logits2, target2).mean()
        with torch.no_grad():
            q_mean = 0.5 * (c51.expected_value(logits1, self.support)
                            + c51.expected_value(logits2, self.support)).mean()
        return loss, next_logp, q_mean

    def actor_loss(self, indices: torch.Tensor, noise: torch.Tensor):
        """alpha log pi(a|s) - mean(Q1, Q2)(s, a). Call with the critics frozen.
        Returns (loss, logp (B,) detached)."""
        b = self.replay.gather(indices)
        with self._autocast():
            action, logp = self.actor(b["actor_obs"], noise)
            logits1, logits2 = self.critic(b["critic_obs"], action)
        q = 0.5 * (c51.expected_value(logits1, self.support) + c51.expected_value(logits2, self.support))
        alpha = self.log_alpha.detach().exp()
        loss = (alpha * logp - q).mean()
        return loss, logp.detach()

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
        r = self.randoms if self._external_randoms else self.draw_randoms()
        critic_losses, alpha_losses, actor_losses, actor_logps, q_means = [], [], [], [], []
        actor_slot = 0
        for k in range(cfg.critic_updates):
            loss, next_logp, q_mean = self._critic_loss_fn(r.indices[k], r.target_noise[k])
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
                    p_loss, logp = self._actor_loss_fn(r.indices[k], r.actor_noise[actor_slot])
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
        first = self.iterations == 0
        t0 = time.perf_counter()
        if self.graphed:
            if self._graph is None:
                self._capture()
            self._graph.replay()
        else:
            self._iteration()
        if first:
            if self.device.type == "cuda":
                torch.cuda.synchronize(self.device)
            self.time_to_first_update = time.perf_counter() - t0
        self.iterations += 1

    def _snapshot(self) -> dict[str, torch.Tensor]:
        return {name: t.detach().clone() for name, t in self.state_tensors().items()}

    @torch.no_grad()
    def _restore(self, snapshot: dict[str, torch.Tensor]) -> None:
        """Put back the learning state of `snapshot` and reset AdamW to its initial state."""
        for name, t in self.state_tensors().items():
            t.copy_(snapshot[name])
        for opt in self.optimizers.values():
            for state in opt.state.values():
                for value in state.values():
                    if torch.is_tensor(value):
                        value.zero_()  # exp_avg, exp_avg_sq and the device step count
        for flat in self.flat.values():
            if flat.grad is not None:
                flat.grad.zero_()

    def _capture(self) -> None:
        """Warm up on a side stream, restore the pre-warm-up state, capture one iteration
        on the same stream."""
        device = self.device
        torch.cuda.synchronize(device)
        snapshot = self._snapshot()
        stream = torch.cuda.Stream(device)
        stream.wait_stream(torch.cuda.current_stream(device))
        with torch.cuda.stream(stream), warnings.catch_warnings():
            # capturable AdamW warns when it steps outside a capture: expected in warm-up
            warnings.filterwarnings("ignore", message=".*capturable=True.*")
            for _ in range(self.cfg.graph_warmup_iters):
                self._iteration()
            self._restore(snapshot)
        stream.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=stream, capture_error_mode=self.cfg.capture_error_mode):
            self._iteration()
        torch.cuda.current_stream(device).wait_stream(stream)
        torch.cuda.synchronize(device)
        self._stream, self._graph = stream, graph

    # ------------------------------------------------------------------ outputs
    def metrics(self) -> dict[str, float]:
        """Means over the last iteration's updates (host sync)."""
        return dict(zip(METRIC_NAMES, self._metrics.tolist()))

    def actor_flat(self, out: torch.Tensor | None = None) -> torch.Tensor:
        """Actor parameters as one flat float32 vector in `Actor.parameters()` order.

        Without `out`: the learner's LIVE flat buffer (no copy; read-only; the next
        update() changes it, stream-ordered). With `out` (e.g. a pinned CPU tensor): copied
        into it, non-blocking when `out` is pinned (synchronise before reading it).
        """
        flat = self.flat["actor"].data.detach()
        if out is None:
            return flat
        return out.copy_(flat, non_blocking=out.device.type == "cpu" and out.is_pinned())

    def state_tensors(self) -> dict[str, torch.Tensor]:
        """The live tensors that define the learning state at start (broadcast them in
        place from rank 0): flat actor, critic and target-critic parameters, log-alpha.
        AdamW state is zero-initialised identically everywhere and is not included."""
        return {
            "actor": self.flat["actor"].data,
            "critic": self.flat["critic"].data,
            "target_critic": self.flat["target_critic"].data,
            "log_alpha": self.flat["alpha"].data,
        }

    def close(self) -> None:
        """Drop the CUDA graph (call before destroying the process group)."""
        if self._graph is not None:
            torch.cuda.synchronize(self.device)
            self._graph.reset()
            self._graph = None
        self._stream = None


__all__ = ["FastSACLearner", "Randoms", "FlatParams", "polyak_", "METRIC_NAMES"]
