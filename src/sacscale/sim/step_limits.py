"""The bounds of a simulation's sizes: envs, threads, envs a CPU steps in one MuJoCo call, and
a solver study's rollout. In a module of their own (no MuJoCo) so that the commands check them
before loading it."""

from __future__ import annotations

from sacscale.cpus import MAX_CPU_ID

MAX_ENVS = 1 << 20  # as a run configuration's num_envs (sacscale.pipeline.plan_values)
# a pool thread per CPU at most: the Linux kernel supports at most 8192 CPUs (NR_CPUS)
MAX_THREADS = MAX_CPU_ID + 1
# One Batch.step runs inside MuJoCo's C code, where a stop (SIGTERM) is acted on only once it
# returns. Measured on a shared 2-core machine, default solver, standing states: 4096 envs on
# one CPU took 2.9 s a step (0.48 CPU-ms an env step), 20000 took 18 s; under a load of 8 a
# SIGTERM was acted on 0.4-7.6 s later at 4096 envs, 1.0-1.2 s at 2048. So one call holds at
# most 2048 envs per CPU at work (the size of the documented runs and of the default).
MAX_ENVS_PER_CPU_CALL = 2048
# solver-study: env steps of one rollout (envs x control steps): the random scenario's targets
# are drawn whole before the first step (nu x 8 bytes an env step, 232 for the G1: about 1 GB
# here) and the states replayed are kept alike, so past this the study's memory, not its time,
# decides
MAX_ROLLOUT_ENV_STEPS = 2**22
DEFAULT_CHECKPOINTS = (10, 50, 100)  # solver-study's control steps of comparison


def envs_per_cpu_problem(num_envs: int, threads: int, cpus: int, given: str | None = None) -> str | None:
    """Why one Batch.step of num_envs on `threads` threads over `cpus` CPUs is too long to be
    deaf to a stop, or None. `given`: the setting that made num_envs, as the line names it
    (default `--num-envs N`)."""
    at_work = max(1, min(threads, cpus))
    per_cpu = -(-num_envs // at_work)
    if per_cpu <= MAX_ENVS_PER_CPU_CALL:
        return None
    given = given or f"--num-envs {num_envs}"
    return (f"{given} at {threads} thread(s) on {cpus} CPU(s): {per_cpu} envs a CPU in one MuJoCo "
            f"step, past {MAX_ENVS_PER_CPU_CALL} (about 1.5 s; a stop is acted on only between steps): give fewer "
            "envs or more threads")


def threads_problem(threads: int, cpus: int) -> str | None:
    """Why `--threads` is not a count of simulation threads for `cpus` usable CPUs, or None:
    more threads than CPUs only take turns, and a rate per thread is then of no thread's work."""
    if 1 <= threads <= cpus:
        return None
    return f"--threads {threads}: must be 1..{cpus}, the CPUs this process may use"
