"""The per-rank training loop: collector -> replay -> whole-iteration update -> weights.

One iteration consumes one env step of all of the rank's envs (num_envs new rows), runs
one learner iteration (8 critic+alpha and 2 actor updates, once the replay holds enough
rows) and publishes the actor back to the collector. The collector is already stepping
the next env step meanwhile (one iteration of policy lag), so on a GPU the learner's
work hides behind simulation.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist
from torch.utils.tensorboard import SummaryWriter

from sacscale import stopping
from sacscale.collect.collector import CollectorConfig, CollectorHandle
from sacscale.collect.shm import STAT_INDEX
from sacscale.cpus import pin_process
from sacscale.learn.learner import FastSACLearner
from sacscale.parallel.grad_sync import allreduce_hooks, broadcast_state
from sacscale.train.checkpoint import save_checkpoint
from sacscale.train.config import (
    FIRST_UPDATE_DONE, TrainConfig, TrainingError, compiles_losses, sac_config, syncs_gradients,
)
from sacscale.train.log_tags import SUMMED_STATS
from sacscale.train.logs import Interval, log_interval, progress_bar, say_above_bar
from sacscale.train.record import check_ranks_agree, gather_state_digests, nonfinite_totals, write_meta_status
from sacscale.train.resume import RESUME_SEED_STRIDE, load_resume_state


def run_rank(cfg: TrainConfig, rank: int, world_size: int, pool: list[int] | None, shm_prefix: str,
             local_rank: int = 0, learner_cpus: list[int] | None = None) -> None:
    """Train on one rank; the process group (if any) is already initialised."""
    device = _set_up_device(cfg, local_rank)
    distributed = dist.is_available() and dist.is_initialized()
    sac = sac_config(cfg)
    learner = FastSACLearner(
        sac, cfg.num_envs, device,
        compile=compiles_losses(cfg) and device.type == "cuda",
        cuda_graph=cfg.cuda_graph and device.type == "cuda",
        seed=cfg.seed + 1000 * rank,
        hooks_in_graph=cfg.allreduce == "in-graph",
    )
    start_it, steps, curriculum = load_resume_state(cfg, learner, rank) if cfg.resume else (0, 0, None)
    synced = _sync_ranks(cfg, learner, world_size, distributed)
    collector = _collector(cfg, sac, learner.actor_flat().numel(), rank, pool, shm_prefix, start_it, curriculum)
    # purge_step: TensorBoard hides what an interrupted sitting logged after its checkpoint
    writer = SummaryWriter(str(Path(cfg.log_dir) / "tb" / f"rank{rank}"), purge_step=start_it + 1 if start_it else None)
    loop = RankLoop(cfg, sac, learner, collector, writer, device, rank=rank, world_size=world_size,
                    local_rank=local_rank, distributed=distributed, learner_cpus=learner_cpus,
                    start_it=start_it, steps=steps, curriculum=curriculum)
    try:
        loop.run()
        agreement = check_ranks_agree(gather_state_digests(learner, world_size, distributed), rank, synced)
        write_meta_status(cfg, rank, "completed", loop.steps,
                          {**agreement, **nonfinite_totals(learner, world_size, distributed)})
    finally:
        loop.close()


def _set_up_device(cfg: TrainConfig, local_rank: int) -> torch.device:
    """This rank's device, made current; CPU ranks get their share of the threads. Seeds
    torch alike on every rank (rank 0's initial weights are broadcast anyway)."""
    device = torch.device(cfg.device_list()[local_rank])
    host_ranks = len(cfg.device_list())  # the ranks on this host (world_size counts every node's)
    if device.type == "cuda":
        torch.cuda.set_device(device)
    else:
        # CPU ranks share the machine with their collectors: do not oversubscribe it.
        torch.set_num_threads(max(1, len(os.sched_getaffinity(0)) // (2 * host_ranks)))
    torch.manual_seed(cfg.seed)
    return device


def _sync_ranks(cfg: TrainConfig, learner, world_size: int, distributed: bool) -> bool:
    """Rank 0's state to every rank, and the gradient all-reduce hooks when the sync is on;
    returns whether it is."""
    if distributed:
        broadcast_state(learner.state_tensors())
    use_hooks = syncs_gradients(cfg, world_size)
    if use_hooks:
        if not distributed:
            raise TrainingError("--grad-sync on needs a process group (set by the launcher)")
        learner.set_gradient_graph_hooks(allreduce_hooks(world_size))
    return use_hooks


def _collector(cfg: TrainConfig, sac, actor_numel: int, rank: int, pool: list[int] | None, shm_prefix: str,
               start_it: int, curriculum) -> CollectorHandle:
    """The rank's collector process (not started yet)."""
    host_ranks = len(cfg.device_list())
    # Unpinned collectors split the usable CPUs between the ranks of this host.
    sim_threads = cfg.sim_threads or (len(pool) if pool else max(1, len(os.sched_getaffinity(0)) // host_ranks))
    return CollectorHandle(
        CollectorConfig(
            rank=rank, shm_prefix=f"{shm_prefix}_r{rank}", model_path=cfg.model, num_envs=cfg.num_envs,
            # a resumed run's envs start fresh episodes from their own seeds, not the first sitting's
            sim_threads=sim_threads, seed=cfg.seed + 1000 * rank + RESUME_SEED_STRIDE * start_it, cpu_ids=pool,
            # serial: the actor has the idle pool to itself; halves: it runs beside the
            # physics, so one thread, which would otherwise take CPUs from the physics
            torch_threads=sim_threads if cfg.env_pipeline == "serial" else 1,
            actor_numel=actor_numel, actor_kwargs=dict(
                obs_dim=sac.actor_obs_dim, action_dim=sac.action_dim, hidden=sac.actor_hidden,
                log_std_min=sac.log_std_min, log_std_max=sac.log_std_max, mean_clip=sac.mean_clip,
                obs_norm=sac.obs_norm),
            pipeline=cfg.env_pipeline,
            tilt_obs=cfg.tilt_obs,
            curriculum=curriculum,
        ),
        step_timeout_s=cfg.timeout_s,
    )


class RankLoop:
    """The iterations of one rank, and what they carry from one to the next: the host
    buffers of the weights and the divergence flags, the interval's sums, the progress
    bar, the last completed and the last saved iteration."""

    def __init__(self, cfg: TrainConfig, sac, learner, collector, writer, device, *, rank: int, world_size: int,
                 local_rank: int, distributed: bool, learner_cpus: list[int] | None, start_it: int, steps: int,
                 curriculum):
        self.cfg, self.sac, self.learner, self.collector, self.writer = cfg, sac, learner, collector, writer
        self.device, self.rank, self.world_size, self.local_rank = device, rank, world_size, local_rank
        self.distributed, self.learner_cpus = distributed, learner_cpus
        self.start_it, self.steps, self.curriculum = start_it, steps, curriculum
        self.on_cuda = device.type == "cuda"
        self.host_weights = torch.empty(learner.actor_flat().numel(), dtype=torch.float32, pin_memory=self.on_cuda)
        self.state = learner.state_tensors()
        self.host_finite = torch.ones(len(self.state), dtype=torch.bool, pin_memory=self.on_cuda)
        self.staging: dict[str, torch.Tensor] = {}
        self.staged = torch.cuda.Event() if self.on_cuda else None
        self.interval = Interval()
        self.interval.total0 = steps * world_size
        self.interval.reset(time.perf_counter(), steps)
        self.bar = progress_bar(cfg, rank, start_it)
        self.counter = torch.zeros(1, dtype=torch.float64, device=device if self.on_cuda else "cpu")
        # --learner-cpu-ids pins after the first update: by then the collector has inherited
        # the full mask, and torch.compile's worker processes (started by the first compiled
        # call, sized from the full CPU count) have been forked outside the learner's CPUs.
        self.pin_pending = bool(learner_cpus)
        self.first_update = True
        self.done = self.saved = start_it  # last completed and last saved iteration

    def run(self) -> None:
        self.host_weights.copy_(self.learner.actor_flat())
        self.collector.start(self.host_weights.numpy())
        for it in range(self.start_it + 1, self.cfg.iterations + 1):
            self.iteration(it)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        self.writer.close()
        self.collector.close()
        self.learner.close()  # CUDA graphs go before the process group

    def stop_check(self) -> None:
        """Raise on a stop signal (sacscale.stopping), first saving the checkpoint of
        the last completed iteration: the stop is seen only between iterations, where
        the state is whole. One rank only: ranks may see the stop at different
        iterations, so several ranks keep their last periodic checkpoint."""
        if stopping.requested() is not None and self.world_size == 1 and self.done > self.saved:
            self.save(self.done)
        stopping.check()

    def iteration(self, it: int) -> None:
        self.stop_check()  # a stop signal ends the run here or in the wait below
        t0 = time.perf_counter()
        arrays, stats, k = self.collector.receive(check_stop=self.stop_check)
        t1 = time.perf_counter()
        stats = stats.copy()  # the slot's stats are rewritten once it is released
        self.add_to_replay(arrays)
        t2 = time.perf_counter()
        if self.learner.ready():
            self.learn(it)
        self.copy_back()
        t3 = time.perf_counter()
        self.check_finite(it)
        self.collector.publish(self.host_weights.numpy())
        # Free the slot only now: the collector's next action on it then uses these
        # weights (one iteration of policy lag, whichever side is slower).
        self.collector.release(k)
        self.steps += self.cfg.num_envs
        self.account(it, stats, (t0, t1, t2, t3))
        if self.bar is not None:
            self.bar.update(1)
        if it % self.cfg.log_every == 0 or it == self.cfg.iterations:
            log_interval(self.writer, self.learner, self.interval, it, self.steps, self.counter, self.distributed,
                         self.rank, self.bar, self.cfg.trace)
        if (self.cfg.checkpoint_every and it % self.cfg.checkpoint_every == 0) or it == self.cfg.iterations:
            self.save(it)
        self.done = it

    def add_to_replay(self, arrays: dict) -> None:
        if self.staged is not None:
            self.staged.synchronize()  # the previous H2D copy from the staging buffers is done
        batch = stage_batch(arrays, self.staging, self.device)
        self.learner.replay.add(**batch)
        self.learner.observe(batch["actor_obs"], batch["critic_obs"])
        if self.staged is not None:
            self.staged.record()

    def learn(self, it: int) -> None:
        update_learner(self.learner, self.rank, it)
        if self.first_update:  # it compiled, warmed up and captured the graph
            self.first_update = False
            # the run wrapper's progress lines read this one: collecting ends, learning begins
            say_above_bar(self.bar, f"sacscale train: rank {self.rank}: {FIRST_UPDATE_DONE} at iteration {it} "
                                    f"({self.learner.time_to_first_update:.1f} s: compile, warm-up, graph capture)")
        if self.pin_pending:
            pin_process(self.learner_cpus)
            torch.set_num_threads(len(self.learner_cpus))
            self.pin_pending = False

    def copy_back(self) -> None:
        """The actor's weights and one finiteness flag per state tensor to the host, in one
        sync: the divergence check runs outside the graph, every iteration, at no extra cost."""
        self.host_finite.copy_(torch.stack([t.isfinite().all() for t in self.state.values()]),
                               non_blocking=self.on_cuda)
        self.host_weights.copy_(self.learner.actor_flat(), non_blocking=self.on_cuda)
        if self.on_cuda:
            torch.cuda.current_stream().synchronize()

    def check_finite(self, it: int) -> None:
        if not bool(self.host_finite.all()):
            bad = [name for name, ok in zip(self.state, self.host_finite.tolist()) if not ok]
            raise TrainingError(f"rank {self.rank}: diverged at iteration {it}: non-finite learner state {bad}")

    def account(self, it: int, stats, times: tuple[float, float, float, float]) -> None:
        """Add the iteration's collector stats and learner phase times to the interval."""
        interval = self.interval
        interval.iters += 1
        for name in SUMMED_STATS:
            interval.add(name, float(stats[STAT_INDEX[name]]))
        interval.sums["penalty_scale"] = float(stats[STAT_INDEX["penalty_scale"]])  # latest value
        self.curriculum = (float(stats[STAT_INDEX["penalty_scale"]]),
                           float(stats[STAT_INDEX["curriculum_mean_length"]]))
        # Policy lag: iterations between the weights that chose this step's actions and the
        # learner's current ones (published versions count from 1 = the initial weights).
        lag = it - float(stats[STAT_INDEX["weights_version"]])
        interval.sums["policy_lag_max"] = max(interval.sums.get("policy_lag_max", 0.0), lag)
        t0, t1, t2, t3 = times
        interval.add("learner_wait_ms", 1e3 * (t1 - t0))
        interval.add("learner_h2d_ms", 1e3 * (t2 - t1))
        interval.add("learner_update_ms", 1e3 * (t3 - t2))

    def save(self, it: int) -> None:
        save_checkpoint(self.cfg, self.sac, self.learner, self.rank, it, self.steps, self.world_size,
                        self.host_weights.numpy(), self.curriculum)
        self.saved = it


def update_learner(learner, rank: int, it: int) -> None:
    """One learner iteration; an update that fails on non-finite state (e.g. the C51
    projection indexing with NaN) is reported as the divergence it is."""
    try:
        learner.update()
    except RuntimeError as exc:
        try:
            bad = [name for name, t in learner.state_tensors().items() if not bool(torch.isfinite(t).all())]
        except Exception:  # noqa: BLE001 - e.g. a CUDA context lost to a device-side assert
            bad = []
        if bad:
            raise TrainingError(
                f"rank {rank}: diverged at iteration {it}: non-finite learner state {bad}; "
                f"the update failed on it: {exc}"
            ) from exc
        raise


def stage_batch(arrays: dict[str, np.ndarray], staging: dict, device) -> dict:
    """Copy one slot out of shared memory (so it can be freed) and start its H2D copy."""
    out = {}
    for key, array in arrays.items():
        if device.type == "cuda":
            buf = staging.get(key)
            if buf is None:
                buf = staging[key] = torch.empty(array.shape, dtype=torch.float32, pin_memory=True)
            buf.numpy()[...] = array
            out[key] = buf.to(device, non_blocking=True)
        else:
            out[key] = torch.from_numpy(array.copy())
    return out
