"""Learner micro-benchmark: ms per iteration and time to the first iteration, per mode.

Modes: "eager", "compile" (Inductor loss functions), "graph" (whole iteration in one CUDA
graph), "compile+graph" (both, the reference setting). The replay buffer is filled with
random transitions (the update cost does not depend on the data).
"""

from __future__ import annotations

import gc
import math
import time

import torch

from sacscale.learn.bench_modes import MODES
from sacscale.learn.config import SACConfig
from sacscale.learn.learner import FastSACLearner


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


@torch.no_grad()
def fill_random(learner: FastSACLearner, rows: int | None = None, chunk: int = 65536, seed: int = 0) -> None:
    """Fill the replay with `rows` random transitions (default: its capacity)."""
    replay = learner.replay
    rows = replay.capacity if rows is None else min(rows, replay.capacity)
    g = torch.Generator(device=replay.device).manual_seed(seed)
    done = 0
    while done < rows:
        n = min(chunk, rows - done)
        block = torch.randn(n, replay.row_dim, device=replay.device, generator=g)
        block[:, replay.layout["action"]].clamp_(-1, 1)
        term = replay.layout["terminated"].start
        block[:, term] = (torch.rand(n, device=replay.device, generator=g) < 0.01).float()
        replay.add_packed(block)
        done += n


def bench_learner(mode: str = "compile+graph", batch: int = 8192, iters: int = 100, num_envs: int = 2048,
                  device: str = "cuda", cfg: SACConfig | None = None, warmup: int = 3, seed: int = 0) -> dict:
    """Time `iters` learner iterations after `warmup` ones; returns a dict of results."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {sorted(MODES)}")
    compile, graph = MODES[mode]
    device = torch.device(device)
    cfg = (cfg or SACConfig()).replace(batch_size=batch)
    learner = FastSACLearner(cfg, num_envs, device, compile=compile, cuda_graph=graph, seed=seed)
    try:
        fill_random(learner, seed=seed)
        _sync(device)
        t0 = time.perf_counter()
        learner.update()
        _sync(device)
        first_s = time.perf_counter() - t0
        for _ in range(warmup):
            learner.update()
        _sync(device)
        t0 = time.perf_counter()
        for _ in range(iters):
            learner.update()
        _sync(device)
        elapsed = time.perf_counter() - t0
        metrics = learner.metrics()
        result = {
            "mode": mode, "compiled": learner.compiled, "graphed": learner.graphed,
            "batch": batch, "num_envs": num_envs, "iters": iters,
            "ms_per_iter": 1e3 * elapsed / max(iters, 1),
            "time_to_first_iter_s": first_s,
            "time_to_first_update_s": learner.time_to_first_update,
            "metrics_finite": all(math.isfinite(v) for v in metrics.values()),
            "metrics": metrics,
            "device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
            "torch": torch.__version__,
            "amp_dtype": str(learner.amp_dtype) if learner.amp_dtype else "float32",
        }
        if device.type == "cuda":
            result["max_memory_gib"] = torch.cuda.max_memory_allocated(device) / 2**30
        return result
    finally:
        learner.close()
        del learner
        gc.collect()
        if device.type == "cuda":
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats(device)


__all__ = ["bench_learner", "fill_random", "MODES"]
