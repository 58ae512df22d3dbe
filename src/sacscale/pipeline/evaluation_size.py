"""The evaluation, resolved once at planning and recorded in plan.json: whether the pipeline
evaluates every run (the config's `evaluation.enabled`) and the envs per command and the
seconds that `sacscale evaluate` runs every run's policy with (the config's `evaluation`,
else a default by where the runs train)."""

from __future__ import annotations

import math

from sacscale.eval.limits import seconds_problem
from sacscale.pipeline.plan_values import PlanError, shown

# where the runs train -> (envs per command, seconds): on GPUs the full protocol; on CPU the
# tiny policies a CPU set learns need no more than one short episode a command
DEFAULTS = {"cuda": (8, 20.0), "cpu": (1, 2.0)}
# the largest evaluation the pipeline runs (workflow/schemas/config.schema.yaml's bound)
MAX_ENVS_PER_COMMAND = 4096
# A CPU set's evaluation: every env is simulated on the CPUs of a machine without GPUs,
# after every run (about 3,000 env-steps a second on one core): the full protocol's envs x
# seconds a command take half a minute a run there, 4096 envs hours. Refused, not cut down:
# the user asked for that size, and a smaller one would be a protocol nobody chose.
CPU_MAX_ENV_SECONDS = DEFAULTS["cuda"][0] * DEFAULTS["cuda"][1]


def on_gpu(run_configs: dict) -> bool:
    return any(rc.device_kind == "cuda" for rc in run_configs.values())


def resolve_evaluation(config: dict, run_configs: dict) -> dict:
    """plan.json's `evaluation`: {"enabled": B, "envs_per_command": N, "seconds": S}, each
    checked; a PlanError names the key. `enabled` is recorded so that the set itself says
    whether its evaluations are among the outputs it owes (sacscale.finished_sets)."""
    given = config.get("evaluation") or {}
    if not isinstance(given, dict):
        raise PlanError(f"evaluation: {shown(given)} is not a mapping (enabled, envs_per_command, seconds)")
    enabled = _enabled(given.get("enabled"))
    kind = "cuda" if on_gpu(run_configs) else "cpu"
    envs = _envs_per_command(given.get("envs_per_command"), DEFAULTS[kind][0])
    seconds = _seconds(given.get("seconds"), DEFAULTS[kind][1])
    if kind == "cpu" and envs * seconds > CPU_MAX_ENV_SECONDS:
        raise PlanError(f"evaluation.envs_per_command {envs} x evaluation.seconds {seconds:g}: {envs * seconds:g} "
                        f"env-seconds a command on a CPU set (no run trains on a GPU); at most "
                        f"{CPU_MAX_ENV_SECONDS:g} (the full protocol's {DEFAULTS['cuda'][0]} envs x "
                        f"{DEFAULTS['cuda'][1]:g} s, about half a minute a run on one core): every env is simulated "
                        "on this machine's CPUs after every run")
    return {"enabled": enabled, "envs_per_command": envs, "seconds": seconds}


def _enabled(value) -> bool:
    if value is None:
        return True  # the schema's default
    if not isinstance(value, bool):
        raise PlanError(f"evaluation.enabled: {shown(value)} is not true or false")
    return value


def _envs_per_command(value, default: int) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_ENVS_PER_COMMAND:
        raise PlanError(f"evaluation.envs_per_command: {shown(value)} is not a whole number in "
                        f"1..{MAX_ENVS_PER_COMMAND}")
    return value


def _seconds(value, default: float) -> float:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise PlanError(f"evaluation.seconds: {shown(value)} is not a finite number of seconds above 0")
    problem = seconds_problem(value, name="evaluation.seconds", settle_name="sacscale evaluate --settle-s")
    if problem:
        raise PlanError(problem)
    return float(value)


def evaluate_flags(evaluation: dict) -> str:
    """sacscale evaluate's protocol flags for plan.json's `evaluation`."""
    return f"--envs-per-command {evaluation['envs_per_command']} --seconds {evaluation['seconds']!r}"
