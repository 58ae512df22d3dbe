"""Env-step throughput: physics alone vs the full G1WalkFlat step.

physics-only: one `Batch.step(nstep=3)` per env step with fixed controls (the keyframe's
standing targets). Left alone, the G1 tips over after about a second with fixed
targets, and a fallen robot has fewer contacts and steps faster; so every
`reset_every` steps all sims go back to the keyframe (outside the timed region), which
keeps the measured states near standing (about 36 contacts).

full step: `G1WalkFlat.step` with uniform random actions in [-1, 1] (`actions="random"`)
or zero actions, the default pose's targets (`actions="zero"`): physics plus
observations, rewards, resets and randomisation. Random actions kick the feet off the
ground, so their steps have fewer contacts and cost much less physics than a policy
that keeps the robots standing; zero actions keep the feet down, the closer ceiling for
a run whose policy stands or walks. Its own physics share
is timed separately (the env's trace timings), so `ratio_full_over_physics` compares
the two rates and `task_overhead_frac` says how much of a full step is not physics.

Rates are given per wall-clock second and per CPU-second of this process; on a machine
shared with other jobs the second is the steadier measure of what a core delivers.
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable, Iterable

import numpy as np
from mujoco.batch import Batch

from sacscale.cpus import format_cpu_list, pinned_thread, validate_cpu_ids
from sacscale.mujoco_lib import mujoco
from sacscale.task import g1_model as g1
from sacscale.task.g1_walk_flat import G1WalkFlat
from sacscale.task.halves import EnvHalves, rounds

Progress = Callable[[int], None]  # called with the number of env steps just done

def physics_throughput(
    model: mujoco.MjModel,
    num_envs: int,
    num_threads: int,
    steps: int,
    cpu_ids: Iterable[int] | None = None,
    warmup: int = 5,
    reset_every: int = 50,
    progress: Progress | None = None,
) -> dict:
    """Env steps/s of Batch.step(nstep=3) alone, fixed standing controls."""
    with pinned_thread(cpu_ids) as pinned:
        batch = Batch(model, num_envs, num_threads)
    ncon = batch.bind("ncon")
    key = model.key(g1.KEYFRAME).id

    def step() -> None:
        with pinned_thread(pinned):  # the caller is one of the pool's workers
            batch.step(nstep=g1.N_SUBSTEPS)

    batch.reset(keyframe=key)
    for _ in range(warmup):
        step()
    batch.reset(keyframe=key)
    elapsed, cpu, done, contacts = 0.0, 0.0, 0, []
    while done < steps:
        chunk = min(reset_every, steps - done)
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(chunk):
            step()
        elapsed += time.perf_counter() - t0
        cpu += time.process_time() - c0
        contacts.append(float(ncon.mean()))
        batch.reset(keyframe=key)
        done += chunk
        if progress:
            progress(chunk)
    return {
        "env_steps_per_s": num_envs * steps / elapsed,
        "env_steps_per_cpu_s": num_envs * steps / cpu,
        "seconds": elapsed,
        "mean_contacts": float(np.mean(contacts)),
    }


ACTIONS = ("random", "zero")


def full_step_throughput(
    model: mujoco.MjModel,
    num_envs: int,
    num_threads: int,
    steps: int,
    cpu_ids: Iterable[int] | None = None,
    warmup: int = 5,
    seed: int = 0,
    progress: Progress | None = None,
    actions: str = "random",
    pipeline: str = "halves",
) -> dict:
    """Env steps/s of the G1WalkFlat step with uniform random actions (or zero actions),
    stepped as the collector steps it (`pipeline`: sacscale.task.halves)."""
    if actions not in ACTIONS:
        raise ValueError(f"actions must be one of {ACTIONS}, got {actions!r}")
    envs = EnvHalves(model, num_envs, num_threads, seed, cpu_ids=cpu_ids, pipeline=pipeline)
    rng = np.random.default_rng(seed + 1)

    def draw(n: int) -> np.ndarray:
        if actions == "zero":
            return np.zeros((n, G1WalkFlat.ACTION_DIM), dtype=np.float32)
        return rng.uniform(-1, 1, (n, G1WalkFlat.ACTION_DIM)).astype(np.float32)

    # actions are drawn before the timed region: they stand in for the policy
    drawn = [[draw(part.num_envs) for _ in range(min(steps, 16))] for part in envs.parts]
    count = [0] * len(envs.parts)

    def policy(i: int, _actor_obs, _critic_obs) -> np.ndarray:
        count[i] += 1
        return drawn[i][count[i] % len(drawn[i])]

    stepping = rounds(envs, policy)
    # The caller does the task work on the pool's CPUs, as the collector does (its whole
    # process is pinned to the pool); at least one round first, so the reset is untimed.
    with pinned_thread(cpu_ids):
        for _ in range(max(1, warmup)):
            next(stepping)
        phys, resets, errors = 0.0, 0, 0
        t0, c0 = time.perf_counter(), time.process_time()
        for i in range(steps):
            for out in next(stepping):
                phys += out.info["time/physics_s"]
                resets += int(out.info["num_resets"])
                errors += int(out.info["sim_errors"])
            if progress and (i + 1) % 10 == 0:
                progress(10)
        elapsed = time.perf_counter() - t0
        cpu = time.process_time() - c0
    if progress and steps % 10:
        progress(steps % 10)
    stepping.close()
    envs.close()
    return {
        "env_steps_per_s": num_envs * steps / elapsed,
        "env_steps_per_cpu_s": num_envs * steps / cpu,
        "seconds": elapsed,
        "physics_seconds": phys,
        "task_overhead_frac": 1.0 - phys / elapsed,
        "resets_per_env_step": resets / (num_envs * steps),
        "sim_errors": errors,
    }


def run_env_bench(
    model: mujoco.MjModel,
    num_envs: int,
    thread_counts: Iterable[int],
    steps: int,
    cpu_ids: Iterable[int] | None = None,
    warmup: int = 5,
    seed: int = 0,
    progress: Progress | None = None,
    actions: str = "random",
) -> dict:
    """Physics-only and full-step (serial and halves) throughput for each thread count."""
    cpus = validate_cpu_ids(cpu_ids) if cpu_ids is not None else None
    ncpu = len(cpus) if cpus is not None else len(os.sched_getaffinity(0))
    rows = []
    for nt in thread_counts:
        phys = physics_throughput(model, num_envs, nt, steps, cpus, warmup=warmup, progress=progress)
        full = full_step_throughput(model, num_envs, nt, steps, cpus, warmup=warmup, seed=seed, progress=progress,
                                    actions=actions, pipeline="serial")
        halves = full_step_throughput(model, num_envs, nt, steps, cpus, warmup=warmup, seed=seed,
                                      progress=progress, actions=actions, pipeline="halves")
        # the serial run's physics spans are the pool alone on the full step's own states:
        # the ceiling that the halves' overlap is measured against
        serial_physics_rate = num_envs * steps / full["physics_seconds"]
        rows.append(
            {
                "threads": nt,
                "oversubscribed": nt > ncpu,
                "physics_env_steps_per_s": phys["env_steps_per_s"],
                "physics_env_steps_per_s_per_thread": phys["env_steps_per_s"] / min(nt, ncpu),
                # per CPU-second of this process: what one uncontended core delivers,
                # robust to other jobs on a shared machine
                "physics_env_steps_per_cpu_s": phys["env_steps_per_cpu_s"],
                "physics_mean_contacts": phys["mean_contacts"],
                "full_env_steps_per_s": full["env_steps_per_s"],
                "full_env_steps_per_cpu_s": full["env_steps_per_cpu_s"],
                "ratio_full_over_physics": full["env_steps_per_s"] / phys["env_steps_per_s"],
                "full_task_overhead_frac": full["task_overhead_frac"],
                # physics rate inside the serial full run (its own states, pool uncontended)
                "full_physics_env_steps_per_s": serial_physics_rate,
                "full_resets_per_env_step": full["resets_per_env_step"],
                "full_sim_errors": full["sim_errors"],
                # the same full step as two alternating halves (the collector's default)
                "halves_env_steps_per_s": halves["env_steps_per_s"],
                "halves_env_steps_per_cpu_s": halves["env_steps_per_cpu_s"],
                "halves_over_full_physics": halves["env_steps_per_s"] / serial_physics_rate,
                "halves_over_serial": halves["env_steps_per_s"] / full["env_steps_per_s"],
                # the halves' own physics rate: slower than serial by the caller's share of a CPU
                "halves_physics_env_steps_per_s": num_envs * steps / halves["physics_seconds"],
                "halves_sim_errors": halves["sim_errors"],
            }
        )
    return {
        "num_envs": num_envs,
        "steps": steps,
        "warmup": warmup,
        "substeps": g1.N_SUBSTEPS,
        "full_actions": actions,
        "cpu_ids": format_cpu_list(cpus) if cpus is not None else None,
        "cpus_available": ncpu,
        "model_sha256": g1.model_bytes_sha256(model),
        "mujoco_version": mujoco.__version__,
        "numpy_version": np.__version__,
        "python": platform.python_version(),
        "processor": cpu_model(),
        "results": rows,
    }


def cpu_model() -> str:
    """The CPU's model name, for recording where a figure was measured."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()
