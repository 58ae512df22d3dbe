"""Evidence on a GPU for the device-side assert of the first learner update (docs/faults.md,
a trainer alone on one GPU dying during its first update): many cold-cache first updates,
alone or in pairs on one GPU, optionally with non-finite rows injected. Not collected by
pytest; run it on the GPU machine:

    python tests/learn/gpu_first_update_stress.py learner --runs 20 --pairs
    python tests/learn/gpu_first_update_stress.py learner --runs 4 --inject
    python tests/learn/gpu_first_update_stress.py learner --runs 8 --pairs --poison
    python tests/learn/gpu_first_update_stress.py train --runs 10 --pairs --cpus 1-7 8-15
    python tests/learn/gpu_first_update_stress.py train --runs 5 --pairs --obs-norm \
        --train-extra '{"target_entropy": -14.5}'     # the configuration that asserted once

`learner`: a reference-size FastSACLearner (compile + CUDA graph) per process, its replay
filled with random rows, first update and `--iters` more, each process with fresh
TORCHINDUCTOR_CACHE_DIR and TRITON_CACHE_DIR (a cold compile). `--inject` puts NaN/inf
rows into the replay (dropped, counted) and one NaN behind the check (counted by the
projection). `train`: the real `sacscale train --devices 0` for a few iterations past
the first update (a pair compiles at once; each process has its own SACSCALE_LOCK_DIR,
which kept the compile lock of that time out of the way). Each run prints one JSON line;
the summary counts exits, device-side asserts
and non-finite counts. The learner mode also runs against a learner without the
non-finite checks (check out main's src/ beside this file): an A/B of the assert itself.
Under compute-sanitizer (slow: use small sizes):

    compute-sanitizer --tool initcheck --track-unused-memory no python \
        tests/learn/gpu_first_update_stress.py learner --runs 1 --num-envs 64 --batch 512 --iters 2 --inline
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def one_learner(args) -> dict:
    """The child: one cold first update of a reference-size learner."""
    import torch

    from sacscale.learn.bench import fill_random
    from sacscale.learn.config import SACConfig
    from sacscale.learn.learner import FastSACLearner

    if args.poison:
        poison_device_memory(args.device)
    cfg = SACConfig(batch_size=args.batch, obs_norm=args.obs_norm)
    learner = FastSACLearner(cfg, args.num_envs, args.device, seed=args.seed, compile=not args.eager,
                             cuda_graph=not args.no_graph)
    fill_random(learner, rows=max(learner.learning_starts, args.batch), seed=args.seed)
    counts = getattr(learner, "nonfinite_counts", None)  # absent before the non-finite checks: A/B with main
    if args.inject:
        if counts is None:
            raise SystemExit("--inject needs the learner's non-finite checks")
        storage, layout = learner.replay.storage, learner.replay.layout
        fresh = torch.randn(8, learner.replay.row_dim, device=args.device)
        for row, (field, value) in enumerate([("reward", math.nan), ("reward", math.inf), ("terminated", math.nan),
                                              ("actor_obs", math.nan), ("critic_obs", -math.inf),
                                              ("next_actor_obs", math.inf), ("next_critic_obs", math.nan),
                                              ("action", math.nan)]):
            fresh[row, layout[field].start] = value
        learner.replay.add_packed(fresh)
        storage[5, layout["reward"].start] = math.nan  # behind the check: reaches the projection
    t0 = time.perf_counter()
    for _ in range(1 + args.iters):
        learner.update()
    if args.device == "cuda":
        torch.cuda.synchronize()
    out = {"first_update_s": learner.time_to_first_update, "total_s": time.perf_counter() - t0,
           **(counts() if counts else {}),
           **({"sources": learner.nonfinite_target_sources()} if hasattr(learner, "nonfinite_target_sources") else {}),
           "state_finite": all(bool(torch.isfinite(t).all()) for t in learner.state_tensors().values())}
    learner.close()
    return out


def poison_device_memory(device: str, fraction: float = 0.5) -> None:
    """Fill most of the free device memory with NaN and give it back, cached blocks and
    driver alike, so that memory read before anything writes it holds NaN instead of the
    zeros a fresh allocation usually has: an uninitialised read then shows as non-finite
    targets or state (counted), not by luck."""
    import torch

    if device != "cuda":
        return
    free, _ = torch.cuda.mem_get_info()
    chunks, left = [], int(free * fraction)
    for size in (2**20, 2**22, 2**25, 2**27):  # the allocator's small and large block pools
        for _ in range(4):
            chunks.append(torch.full((size // 4,), float("nan"), device=device))
            left -= size
    while left > 2**29:
        chunks.append(torch.full((2**29 // 4,), float("nan"), device=device))
        left -= 2**29
    torch.cuda.synchronize()
    del chunks
    torch.cuda.empty_cache()  # back to the driver: later cudaMallocs (graph pools too) map these pages


def _fresh_env(tmp: Path) -> dict:
    env = dict(os.environ)
    env.update(TORCHINDUCTOR_CACHE_DIR=str(tmp / "inductor"), TRITON_CACHE_DIR=str(tmp / "triton"),
               SACSCALE_LOCK_DIR=str(tmp / "lock"))
    (tmp / "lock").mkdir()
    return env


def _start(args, run: int, slot: int, tmp: Path) -> subprocess.Popen:
    env = _fresh_env(tmp)
    if args.mode == "learner":
        cmd = [sys.executable, __file__, "learner", "--child", "--device", args.device,
               "--num-envs", str(args.num_envs),
               "--batch", str(args.batch), "--iters", str(args.iters), "--seed", str(run * 2 + slot)]
        cmd += ["--inject"] if args.inject else []
        cmd += ["--poison"] if args.poison else []
        cmd += ["--eager"] if args.eager else []
        cmd += ["--no-graph"] if args.no_graph else []
        cmd += ["--obs-norm"] if args.obs_norm else []
    else:
        cmd = [sys.executable, "-m", "sacscale.cli", "train", "--devices", "0", "--num-envs", str(args.num_envs),
               "--iterations", str(args.train_iterations), "--log-every", "5", "--seed", str(run * 2 + slot),
               "--log-dir", str(tmp / "run"), "--collector-cpu-ids", args.cpus[slot % len(args.cpus)]]
        cmd += ["--obs-norm"] if args.obs_norm else []
        cmd += ["--extra", args.train_extra] if args.train_extra else []
        cmd += ["--model", args.model] if args.model else []
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _result(args, proc: subprocess.Popen, tmp: Path, started: float) -> dict:
    text, _ = proc.communicate()
    res = {"exit": proc.returncode, "wall_s": round(time.perf_counter() - started, 1),
           "device_assert": "device-side assert" in text, "index_out_of_bounds": "out of bounds" in text}
    if args.mode == "learner":
        lines = [line for line in text.splitlines() if line.startswith("{")]
        res.update(json.loads(lines[-1]) if lines else {"tail": text[-2000:]})
    else:
        meta = tmp / "run" / "train_meta.json"
        if meta.is_file():
            m = json.loads(meta.read_text())
            keys = ("status", "nonfinite_rows", "nonfinite_targets", "nonfinite_target_sources")
            res.update({k: m.get(k) for k in keys})
        if proc.returncode:
            res["tail"] = text[-2000:]
    return res


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("mode", choices=("learner", "train"))
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--pairs", action="store_true", help="two processes at once on the GPU per run")
    p.add_argument("--num-envs", type=int, default=2048)
    p.add_argument("--batch", type=int, default=8192)
    p.add_argument("--iters", type=int, default=20, help="learner mode: updates after the first")
    p.add_argument("--train-iterations", type=int, default=15, help="train mode: learning starts at 10")
    p.add_argument("--cpus", nargs="+", default=["1-7", "8-15"], help="train mode: collector CPUs per slot")
    p.add_argument("--train-extra", default="", help='train mode: --extra, e.g. \'{"target_entropy": -14.5}\'')
    p.add_argument("--model", default="", help="train mode: --model (a compiled .mjb)")
    p.add_argument("--inject", action="store_true")
    p.add_argument("--poison", action="store_true", help="learner mode: NaN in the memory it will be given")
    p.add_argument("--eager", action="store_true", help="learner mode: losses not compiled (no Inductor)")
    p.add_argument("--no-graph", action="store_true", help="learner mode: no CUDA graph")
    p.add_argument("--obs-norm", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="cuda", help="learner mode: cpu only to try the script out (eager)")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--inline", action="store_true", help="one learner in this process (for compute-sanitizer)")
    args = p.parse_args()
    if args.child or args.inline:
        print(json.dumps(one_learner(args)), flush=True)
        return 0
    results = []
    for run in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="sacscale-stress-") as base:
            slots = 2 if args.pairs else 1
            tmps = [Path(base) / f"s{slot}" for slot in range(slots)]
            for t in tmps:
                t.mkdir()
            started = time.perf_counter()
            procs = [_start(args, run, slot, t) for slot, t in enumerate(tmps)]
            for slot, (proc, t) in enumerate(zip(procs, tmps)):
                res = {"run": run, "slot": slot, **_result(args, proc, t, started)}
                results.append(res)
                print(json.dumps(res), flush=True)
    summary = {"processes": len(results), "failed": sum(r["exit"] != 0 for r in results),
               "device_asserts": sum(r["device_assert"] for r in results),
               "nonfinite_rows": sum(r.get("nonfinite_rows") or 0 for r in results),
               "nonfinite_targets": sum(r.get("nonfinite_targets") or 0 for r in results)}
    print("SUMMARY " + json.dumps(summary), flush=True)
    return 1 if summary["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
