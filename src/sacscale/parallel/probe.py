"""Correctness probe: does data-parallel gradient sync compute the right update?

N ranks run the learner with the all-reduce hook (inside the whole-iteration CUDA graph
on CUDA; eagerly through gloo on CPU) for several full iterations, each rank on its own
batch. A single-process reference runs the same learner, eagerly and without hooks, on
the concatenation of the ranks' batches (same replay rows, same noise, same initial
weights). The mean loss over the concatenated batch has exactly the gradient of the
average of the ranks' mean losses, so gradients and parameters must agree up to
floating-point reassociation (and bf16 rounding where autocast is on).

With one GPU the probe still runs the all-reduce captured in the graph (world size 1)
and compares it with eager execution.

Each rank starts from its own seed (seed + 1000 x rank, as in training), so the start-up
broadcast is under test; the sync is judged exactly too (`SYNC_REL_TOL`, any dtype).
`MUTATIONS` break the sync on purpose; the tests assert the probe fails. The settings,
tolerances and mutations are in `sacscale.parallel.probe_settings` (no torch: verify reads
them). The trainer's own rank code is probed by `sacscale.train.probe`, with the recorders
and checks here.
"""

from __future__ import annotations

import json
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.distributed as dist

from sacscale.atomic import atomic_write_text
from sacscale.learn import learner as learner_module
from sacscale.learn.config import SACConfig
from sacscale.learn.learner import FastSACLearner, Randoms
from sacscale.learn.state_names import BUCKET_NAMES
from sacscale import stopping
from sacscale.parallel import launch
from sacscale.parallel.grad_sync import allreduce_hooks, broadcast_state
from sacscale.parallel.probe_settings import (
    SYNC_REL_TOL,
    TOLERANCES,
    ProbeSettings,
    hooks_in_graph,
    recorded_settings,
    size_problem,
)
from sacscale.parallel.probe_tensors import compared_tensors, floored, relative


def _sac_config(s: ProbeSettings, batch_size: int):
    return SACConfig(**{**s.learner, "batch_size": batch_size, "learning_starts": 0,
                        "replay_per_env": s.replay_rows, "amp_dtype": s.amp_dtype})


def _fill_replay(learner, rows: int, seed: int) -> None:
    """The same synthetic transitions on every rank and in the reference."""
    cfg = learner.cfg
    g = torch.Generator().manual_seed(seed)
    randn = lambda *shape: torch.randn(*shape, generator=g)  # noqa: E731
    learner.replay.add(
        actor_obs=randn(rows, cfg.actor_obs_dim),
        critic_obs=randn(rows, cfg.critic_obs_dim),
        action=torch.rand(rows, cfg.action_dim, generator=g) * 2 - 1,
        reward=randn(rows),
        next_actor_obs=randn(rows, cfg.actor_obs_dim),
        next_critic_obs=randn(rows, cfg.critic_obs_dim),
        terminated=(torch.rand(rows, generator=g) < 0.05).float(),
    )


def _randoms(cfg, rows: int, batch: int, seed: int, iteration: int, rank: int):
    """Rank `rank`'s random numbers of one iteration (drawn on the CPU, reproducibly)."""
    g = torch.Generator().manual_seed(1_000_003 * (seed + 1) + 1009 * iteration + rank)
    u, p, a = cfg.critic_updates, cfg.actor_updates, cfg.action_dim
    return Randoms(
        indices=torch.randint(0, rows, (u, batch), generator=g),
        target_noise=torch.randn(u, batch, a, generator=g),
        actor_noise=torch.randn(p, batch, a, generator=g),
    )


class GradRecorder:
    """A hook that keeps the flat gradient of each bucket's latest step (allocated at the
    first, eager, call and reused by a captured graph, so it is graph-safe)."""

    def __init__(self):
        self.last: dict[str, torch.Tensor] = {}

    def __call__(self, name: str, flat_grad: torch.Tensor) -> None:
        buf = self.last.get(name)
        if buf is None:
            buf = self.last[name] = torch.zeros_like(flat_grad)
        buf.copy_(flat_grad)


def sync_hooks(world_size: int, rank: int, mutation: str | None = None, grad_sync: bool = True, base=None):
    """The production all-reduce hooks (`grad_sync.allreduce_hooks`, or `base`), or a mutation of them."""
    if base is None:
        base = allreduce_hooks
    if not grad_sync or mutation == "no_allreduce":
        return []
    hooks = list(base(world_size))
    if mutation == "sum":
        hooks.append(lambda name, g: g.mul_(world_size))  # undo the mean: a plain sum
    if mutation == "scale_rank1" and rank == 1:
        hooks.insert(0, lambda name, g: g.mul_(1.001))
    return hooks


def broadcast(tensors: dict, mutation: str | None = None) -> None:
    if mutation != "no_broadcast":
        broadcast_state(tensors)


def _run_learner(s: ProbeSettings, device, batch: int, hooks, compiled: bool, graphed: bool, seed: int | None = None):
    """A learner on the probe's replay; hooks: [input recorder, *hooks, output recorder].
    Ranks sharing a CUDA device sync through gloo, between graph segments, as the trainer does."""
    cfg = _sac_config(s, batch)
    in_graph = hooks_in_graph(s.devices)
    # read at call time: a GPU test allows compiled segments to show they still fail
    compiled = compiled and (in_graph or learner_module.COMPILED_SEGMENTS_ALLOWED)
    learner = FastSACLearner(cfg, 1, device, compile=compiled, cuda_graph=graphed,
             seed=s.seed if seed is None else seed, hooks_in_graph=in_graph)
    _fill_replay(learner, s.replay_rows, s.seed)
    learner.use_external_randoms()
    local, synced = GradRecorder(), GradRecorder()
    learner.set_gradient_graph_hooks([local, *hooks, synced])
    return learner, local, synced, cfg


def state_spread(tensors: dict) -> dict[str, float]:
    """{name: max |this rank's - rank 0's|} over all ranks (collective)."""
    spread = {}
    for key in sorted(tensors):
        mine = tensors[key].detach().clone()
        first = mine.clone()
        dist.broadcast(first, src=0)
        diff = (mine - first).abs().max()
        dist.all_reduce(diff, op=dist.ReduceOp.MAX)
        spread[key] = diff.item()
    return spread


def sync_check(local: GradRecorder, synced: GradRecorder, world_size: int) -> list[dict]:
    """Each bucket's synced gradient against the float64 mean of the ranks' own (collective)."""
    out = []
    for key in BUCKET_NAMES:
        if key not in local.last:
            continue
        mine = local.last[key].detach().double()
        parts = [torch.empty_like(mine) for _ in range(world_size)]
        dist.all_gather(parts, mine)
        expected = torch.stack(parts).mean(dim=0)
        err = (synced.last[key].detach().double() - expected).abs().max()
        dist.all_reduce(err, op=dist.ReduceOp.MAX)  # the worst rank
        scale = floored(expected.abs().max().item())
        rel = relative(err.item(), scale)
        out.append({"tensor": f"sync/{key}", "max_abs_diff": err.item(), "scale": scale, "max_rel_diff": rel,
                    "criterion": "max", "rel_diff": rel, "tolerance": SYNC_REL_TOL,
                    "pass": bool(math.isfinite(rel) and rel <= SYNC_REL_TOL), "judged": True})
    return out


def _iterate(learner, randoms_for, iterations: int, device) -> None:
    for it in range(iterations):
        stopping.check()  # a rank told to stop (its job's stop, its supervisor gone) ends here
        learner.randoms.copy_(randoms_for(it).to(device))
        learner.update()
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _compare(name: str, got: torch.Tensor, ref: torch.Tensor, scale: torch.Tensor, rel_tol: float | None,
             criterion: str = "max") -> dict:
    """The difference got - ref relative to `scale`: elementwise ("max": the largest entry of
    each) or normwise ("norm": their 2-norms); `rel_diff` is the one judged."""
    got, ref, scale = got.detach().double().cpu(), ref.detach().double().cpu(), scale.detach().double().cpu()
    abs_err = (got - ref).abs().max().item()
    denom = floored(scale.abs().max().item())
    rel = relative(abs_err, denom)
    norm_rel = relative((got - ref).norm().item(), scale.norm().item())
    judged = norm_rel if criterion == "norm" else rel
    ok = math.isfinite(judged) and (rel_tol is None or judged <= rel_tol)
    return {"tensor": name, "max_abs_diff": abs_err, "scale": denom, "max_rel_diff": rel, "norm_rel_diff": norm_rel,
            "criterion": criterion, "rel_diff": judged, "tolerance": rel_tol, "pass": bool(ok),
            "judged": rel_tol is not None}


@dataclass
class _DataParallelRun:
    """What one rank of the data-parallel side measured."""
    cfg: object              # the learner's SACConfig
    before: dict             # rank spread before the start-up broadcast
    start: dict              # ... after it
    initial: dict            # the state after the broadcast
    spread: dict             # rank spread after the iterations
    sync: list               # the exact sync check's comparisons
    state: dict              # the state after the iterations
    grads: GradRecorder      # the synced gradients of the last step
    graphed: bool            # the all-reduce ran inside the CUDA graph
    compiled: bool


def _run_data_parallel(s: ProbeSettings, rank: int, world_size: int, device) -> _DataParallelRun:
    """The data-parallel learner, each rank from its own seed as in training (seed + 1000 x
    rank), so only the start-up broadcast makes them agree."""
    on_cuda = device.type == "cuda"
    dp, dp_local, dp_grads, cfg = _run_learner(
        s, device, s.batch_size, sync_hooks(world_size, rank, s.mutation, s.grad_sync),
        compiled=s.compile_loss and on_cuda, graphed=on_cuda, seed=s.seed + 1000 * rank,
    )
    before = state_spread(dp.state_tensors())
    broadcast(dp.state_tensors(), s.mutation)
    start = state_spread(dp.state_tensors())
    initial = _copy_state(dp)
    _iterate(dp, lambda it: _randoms(cfg, s.replay_rows, s.batch_size, s.seed, it, rank), s.iterations, device)
    run = _DataParallelRun(
        cfg=cfg, before=before, start=start, initial=initial,
        spread=state_spread(dp.state_tensors()),  # every rank must hold rank 0's parameters
        sync=sync_check(dp_local, dp_grads, world_size), state=_copy_state(dp), grads=dp_grads,
        graphed=dp._graph is not None and dp.hooks_in_graph, compiled=dp.compiled,
    )
    dp.close()
    return run


def _copy_state(learner) -> dict:
    return {k: v.detach().clone() for k, v in learner.state_tensors().items()}


def _comparisons(dp: _DataParallelRun, ref_initial: dict, ref_state: dict, ref_grads: GradRecorder,
                 tol: dict) -> list[dict]:
    """Parameters (normwise) and gradients against the reference, then the sync check, in
    the order of the code's list (`compared_tensors`, which verify holds a record to)."""
    out = []
    for name in compared_tensors("learner", obs_norm=bool(dp.cfg.obs_norm), sync=False):
        kind, key = name.split("/", 1)
        if kind == "param":
            moved = ref_state[key] - ref_initial[key]
            out.append(_compare(name, dp.state[key], ref_state[key], moved, tol["param_rel"], "norm"))
        elif key in ref_grads.last:  # a bucket that never stepped is missing, and verify names it
            out.append(_compare(name, dp.grads.last[key], ref_grads.last[key], ref_grads.last[key],
                                tol["grad_rel"]))
    return out + dp.sync


def _agreement(dp: _DataParallelRun, ref_initial: dict, world_size: int) -> dict[str, bool]:
    """The ranks started apart (their own seeds), the broadcast gave every rank the
    reference's initial weights, and they ended identical."""
    start_identical = (all((dp.initial[k] - ref_initial[k]).abs().max().item() == 0 for k in dp.initial)
                       and all(v == 0 for v in dp.start.values()))
    return {
        "ranks_started_apart": world_size == 1 or any(v > 0 for v in dp.before.values()),
        "initial_weights_identical": start_identical,
        "ranks_identical_after": all(v == 0 for v in dp.spread.values()),
    }


def _probe_rank(rank: int, world_size: int, s: ProbeSettings, output: str) -> None:
    device = torch.device(s.devices[rank] if world_size > 1 else s.devices[0])
    if device.type == "cuda":
        torch.cuda.set_device(device)
    on_cuda = device.type == "cuda"
    t0 = time.time()
    dp = _run_data_parallel(s, rank, world_size, device)
    if rank != 0:
        return

    # ---- the single-process reference: eager, no hooks, the concatenated batch, from
    # rank 0's seed (what the broadcast gives every rank)
    def ref_randoms(it):
        return Randoms.concat([_randoms(dp.cfg, s.replay_rows, s.batch_size, s.seed, it, r)
                               for r in range(world_size)])

    ref, _, ref_grads, _ = _run_learner(
        s, device, s.batch_size * world_size, [], compiled=False, graphed=False, seed=s.seed)
    ref_initial = _copy_state(ref)
    _iterate(ref, ref_randoms, s.iterations, device)
    ref_state = _copy_state(ref)

    dtype = "bfloat16" if ref.amp_dtype == torch.bfloat16 else "float32"
    tol = TOLERANCES[dtype]
    comparisons = _comparisons(dp, ref_initial, ref_state, ref_grads, tol)
    agreement = _agreement(dp, ref_initial, world_size)
    result = {
        "pass": all(c["pass"] for c in comparisons) and all(agreement.values()),
        **recorded_settings(s),
        # what the ranks did, in the settings' places: verify derives them from the settings
        "backend": dist.get_backend(),
        "compile_loss": s.compile_loss and on_cuda and dp.compiled,
        "allreduce_in_cuda_graph": dp.graphed,
        "autocast_dtype": dtype,
        "tolerance": tol,
        **agreement,
        "rank_spread_before_broadcast_max_abs": dp.before,
        "rank_spread_max_abs": dp.spread,
        "comparisons": comparisons,
        "torch": torch.__version__,
        "seconds": time.time() - t0,
        **({"learner_overrides": dict(s.learner)} if s.learner else {}),
    }
    ref.close()
    stopping.check()  # a stopped probe writes no result for the pipeline to take as done
    write_result(output, result)


def write_result(output: str, result: dict) -> None:
    atomic_write_text(output, json.dumps(result, indent=2))


def run_probe(s: ProbeSettings, output: str, timeout_s: float = 600.0) -> dict:
    """Run the probe (spawning one process per rank when there are several)."""
    s = s.resolved()
    if problem := size_problem(s):  # before any rank starts: a learner too large ends in the OOM killer
        raise ValueError(problem)
    world_size = len(s.devices)
    backend = launch.backend_for(s.devices)
    if world_size == 1:
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(launch.free_port()))
        launch.init_group(backend, 0, 1, timeout_s)
        try:
            _probe_rank(0, 1, s, output)
        finally:
            launch.destroy_group()
    else:
        launch.spawn_and_supervise(
            _probe_rank, world_size, backend, timeout_s,
            args_for_rank=lambda r: (s, output), shm_prefix=launch.job_prefix(),
            describe_rank=lambda r: f"device {s.devices[r]}",
        )
    return json.loads(Path(output).read_text(encoding="utf-8"))
