"""`sacscale env-bench`: physics-only vs full G1WalkFlat env-step throughput per thread count."""

from __future__ import annotations

import argparse
import os
import sys

from tqdm import tqdm

from sacscale.atomic import write_json
from sacscale.checks import seed_arg
from sacscale.commands import BadInput
from sacscale.commands._output_lock import holding_outputs
from sacscale.commands._inputs import model_problem
from sacscale.cpus import validate_cpu_ids
from sacscale.sim.step_limits import MAX_ENVS, MAX_THREADS, envs_per_cpu_problem
from sacscale.usage import say


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--num-envs", type=int, default=2048, help="simulations in the batch (default 2048)")
    parser.add_argument("--threads", default="1,4,8,15", help="comma-separated thread counts (default 1,4,8,15)")
    parser.add_argument("--steps", type=int, default=100, help="timed env steps per measurement (default 100)")
    parser.add_argument("--warmup", type=int, default=5, help="untimed env steps first (default 5)")
    parser.add_argument("--cpu-ids", default=None, help='pin the simulation threads to these CPUs, e.g. "8-39,48-79"')
    parser.add_argument("--model", default=None, help="compiled model (.mjb); default: build from the asset package")
    parser.add_argument("--seed", type=seed_arg, default=0, help="random seed of the states and actions (default 0)")
    parser.add_argument("--actions", choices=("random", "zero"), default="random",
                        help="actions of the full step: uniform random (feet kicked up, few contacts) or zero "
                             "(default pose held, feet down: closer to a policy that stands or walks)")
    parser.add_argument("--output", default=None, help="write the results as JSON to this file")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


MAX_STEPS = 10**9


def run(args: argparse.Namespace) -> int:
    try:
        threads = [int(t) for t in str(args.threads).split(",") if t.strip()]
        if not threads or min(threads) < 1 or max(threads) > MAX_THREADS:
            raise ValueError(f"--threads: thread counts must be integers in 1..{MAX_THREADS}, got {args.threads}")
        cpus = validate_cpu_ids(args.cpu_ids) if args.cpu_ids else None
        if args.num_envs > MAX_ENVS:  # MuJoCo's batch takes a C int; memory runs out long before
            raise ValueError(f"--num-envs must be at most {MAX_ENVS}, got {args.num_envs}")
        ncpu = len(cpus) if cpus is not None else len(os.sched_getaffinity(0))
        too_long = envs_per_cpu_problem(args.num_envs, min(threads), ncpu)
        if too_long:
            raise ValueError(too_long)
        if args.steps > MAX_STEPS:
            raise ValueError(f"--steps must be at most {MAX_STEPS}, got {args.steps}")
        if args.num_envs < 2:
            raise ValueError(f"--num-envs must be at least 2 (the full step is also measured as two halves), "
                             f"got {args.num_envs}")
        if args.steps < 1 or args.warmup < 0:
            raise ValueError("--steps must be positive and --warmup >= 0")
    except ValueError as e:
        say(f"env-bench: {e}", file=sys.stderr)
        return 2
    problem = model_problem(args.model)  # a file that is not the task's model: named, before the measurement
    if problem:
        raise BadInput(problem)
    # MuJoCo loads here, after the option checks: a refusal answers without it
    from sacscale.sim.bench import run_env_bench
    from sacscale.task.g1_model import load_model

    model = load_model(args.model)
    with holding_outputs(("--output", args.output)):  # nor written into another command's live folder
        total = 3 * len(threads) * args.steps  # physics, serial full, halves full, per thread count
        with tqdm(total=total, unit="step", disable=args.no_progress, desc="env-bench") as bar:
            result = run_env_bench(
                model, args.num_envs, threads, args.steps, cpus, warmup=args.warmup, seed=args.seed,
                progress=bar.update, actions=args.actions,
            )
        result["model_path"] = args.model

        print(f"{args.num_envs} envs, {args.steps} steps, {result['processor']}, CPUs {result['cpu_ids'] or 'all'}, "
              f"full step with {args.actions} actions")
        # physics/s: standing states, fixed controls. serial/s: G1WalkFlat's full step, physics
        # then task work; non-physics: its share outside Batch.step; its physics/s: the pool's
        # rate on those states. halves/s: the same step as two alternating halves (the
        # collector's way), and halves/phys: that over the serial run's physics rate.
        print(
            f"{'threads':>7} {'physics/s':>10} {'per cpu-s':>10} {'serial/s':>10} {'non-physics':>11}"
            f" {'its physics/s':>13} {'halves/s':>10} {'halves/phys':>11}"
        )
        for r in result["results"]:
            note = "  (more threads than CPUs)" if r["oversubscribed"] else ""
            print(
                f"{r['threads']:>7} {r['physics_env_steps_per_s']:>10.0f} {r['physics_env_steps_per_cpu_s']:>10.0f}"
                f" {r['full_env_steps_per_s']:>10.0f} {100 * r['full_task_overhead_frac']:>10.1f}%"
                f" {r['full_physics_env_steps_per_s']:>13.0f} {r['halves_env_steps_per_s']:>10.0f}"
                f" {100 * r['halves_over_full_physics']:>10.1f}%{note}"
            )
        if args.output:
            write_json(args.output, result)  # atomic: never written through a link, never half a file
    return 0
