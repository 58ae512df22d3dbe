"""The trainer-path correctness probe: the trainer's own `run_rank` (its broadcast, its
hooks, real collectors) for a few iterations, watched from outside; every rank must end
bit-identical and every synced gradient must be the ranks' mean (`SYNC_REL_TOL`). The
learner-level probe and its recorders are in `sacscale.parallel.probe`, `MUTATIONS` in
`sacscale.parallel.probe_settings`, the settings in `sacscale.train.probe_settings` (no torch:
verify reads them)."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from sacscale.parallel import launch
from sacscale.scratch import scratch_folder
from sacscale.parallel.probe import (
    GradRecorder,
    state_spread,
    sync_check,
    sync_hooks,
    write_result,
)
from sacscale.parallel.probe_settings import MUTATIONS, SYNC_REL_TOL
from sacscale.train import rank as rank_module
from sacscale.train.config import RanksApart, TrainConfig
from sacscale.train.probe_settings import CRITERION, TrainerProbeSettings, recorded_trainer_settings

__all__ = ["CRITERION", "TrainerProbeSettings", "fewest_iterations", "run_trainer_probe"]


@contextlib.contextmanager
def _watched_trainer(s: TrainerProbeSettings, rank: int, world_size: int, seen: dict):
    """The names run_rank looks up, replaced while it runs: the learner class by a subclass
    that records what the trainer does with it (and compares the ranks at its close), the
    sync functions by wrappers, mutated only when asked. Nothing in the trainer changes."""
    real = {name: getattr(rank_module, name) for name in ("allreduce_hooks", "broadcast_state", "FastSACLearner")}

    def watched_broadcast(tensors, src=0):
        seen["before"] = state_spread(tensors)
        seen["broadcasts"] += 1
        if s.mutation != "no_broadcast":
            real["broadcast_state"](tensors, src)

    class Watched(real["FastSACLearner"]):
        def set_gradient_graph_hooks(self, hooks):
            seen["hooks_installed"] += len(hooks)
            self._probe_local, self._probe_synced = GradRecorder(), GradRecorder()
            super().set_gradient_graph_hooks([self._probe_local, *hooks, self._probe_synced])

        def update(self):
            seen["updates"] += 1
            super().update()

        def close(self):
            if "spread" not in seen:
                seen["spread"] = state_spread(self.state_tensors())
                seen["sync"] = sync_check(self._probe_local, self._probe_synced, world_size) \
                    if hasattr(self, "_probe_local") else []
            super().close()

    rank_module.broadcast_state = watched_broadcast
    rank_module.allreduce_hooks = lambda ws: sync_hooks(ws, rank, s.mutation, base=real["allreduce_hooks"])
    rank_module.FastSACLearner = Watched
    try:
        yield
    finally:
        for name, value in real.items():
            setattr(rank_module, name, value)


def fewest_iterations(s: TrainerProbeSettings) -> int:
    """The fewest trainer iterations in which the learner updates at all: it starts once the
    replay holds its learning start's rows, `num_envs` a step (fewer: nothing to compare)."""
    from sacscale.train.config import sac_config

    rows = sac_config(_trainer_config(s, "")).learning_starts_rows(s.num_envs)
    return -(-rows // s.num_envs)


def _trainer_config(s: TrainerProbeSettings, log_dir: str) -> TrainConfig:
    return TrainConfig(
        devices=",".join(s.devices), num_envs=s.num_envs, batch_size=s.batch_size, iterations=s.iterations,
        seed=s.seed, log_dir=log_dir, log_every=s.iterations, checkpoint_every=0, grad_sync="on",
        model=s.model, replay_per_env=64, sim_threads=1, timeout_s=s.timeout_s, extra=dict(s.extra),
        allreduce="between-graphs" if launch.shares_cuda_device(s.devices) else "in-graph",
    )


def _trainer_rank(rank: int, world_size: int, s: TrainerProbeSettings, output: str, log_dir: str,
                  shm_prefix: str) -> None:
    """One rank of `run_rank`, watched; rank 0 writes the verdict."""
    seen: dict = {"hooks_installed": 0, "updates": 0, "broadcasts": 0}
    with _watched_trainer(s, rank, world_size, seen):
        try:
            rank_module.run_rank(_trainer_config(s, log_dir), rank, world_size, None, shm_prefix,
                                 local_rank=rank if world_size > 1 else 0)
        except RanksApart as exc:  # the trainer's own end-of-run check caught a broken sync: recorded
            seen["trainer_found_ranks_apart"] = str(exc)
    if rank == 0:
        write_result(output, _verdict(s, world_size, seen))


def _verdict(s: TrainerProbeSettings, world_size: int, seen: dict) -> dict:
    ranks_apart = world_size == 1 or any(v > 0 for v in seen.get("before", {}).values())
    identical = bool(seen.get("spread")) and all(v == 0 for v in seen["spread"].values())
    checks = {
        "hooks_installed_by_trainer": seen["hooks_installed"] > 0,
        "learner_updated": seen["updates"] > 0,
        "broadcast_by_trainer": seen["broadcasts"] > 0,
        "ranks_started_apart": ranks_apart,
        "ranks_bit_identical_after": identical,
        "sync_within_tolerance": bool(seen.get("sync")) and all(c["pass"] for c in seen["sync"]),
    }
    return {
        "pass": all(checks.values()),
        **recorded_trainer_settings(s),
        "checks": checks,
        "learner_updates_per_rank": seen["updates"],
        "rank_spread_before_broadcast_max_abs": seen.get("before"),
        "rank_spread_max_abs": seen.get("spread"),
        "trainer_found_ranks_apart": seen.get("trainer_found_ranks_apart"),
        "comparisons": seen.get("sync", []),
        "sync_tolerance": SYNC_REL_TOL,
        "criterion": CRITERION,
    }


def run_trainer_probe(s: TrainerProbeSettings, output: str) -> dict:
    """Drive the trainer's rank code for a few iterations (one process per rank)."""
    if s.mutation is not None and s.mutation not in MUTATIONS:
        raise ValueError(f"mutation: {s.mutation!r} is not one of {', '.join(MUTATIONS)}")
    world_size = len(s.devices)
    backend = launch.backend_for(s.devices)
    prefix = launch.job_prefix()
    with scratch_folder("sacscale-probe-") as log_folder:
        log_dir = str(log_folder)
        if world_size == 1:
            os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(launch.free_port()))
            launch.init_group(backend, 0, 1, s.timeout_s)
            try:
                _trainer_rank(0, 1, s, output, log_dir, prefix)
            finally:
                launch.destroy_group()
        else:
            launch.spawn_and_supervise(
                _trainer_rank, world_size, backend, s.timeout_s,
                args_for_rank=lambda r: (s, output, log_dir, prefix), shm_prefix=prefix,
                describe_rank=lambda r: f"device {s.devices[r]}",
            )
    return json.loads(Path(output).read_text(encoding="utf-8"))
