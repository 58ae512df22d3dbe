"""A planned run's command line, held at planning to what the kernel lets a program start with.

The run rule starts `sacscale record-run` with the run's resolved configuration as one JSON
word (`--resolved-json`, which records the run's env too), each env variable as an `--env`
word, and the trainer's command after `--`; record-run starts the trainer with that env.
Each env value may be 4,096 characters, so together they could make one word past the
kernel's bound on a single argument (MAX_ARG_STRLEN, 128 KiB), or a command line and
environment past ARG_MAX: the run then failed with `Argument list too long` after the jobs
before it ran, and every rerun alike. Refused here, naming the run configuration's env."""

from __future__ import annotations

import json
import os

from sacscale.pipeline.plan_model import Plan, Run
from sacscale.pipeline.plan_values import PlanError, config_key
from sacscale.pipeline.run_commands import resolved_run, run_environment, train_command, work_folder

# the kernel's bound on one argument or environment string (MAX_ARG_STRLEN: 32 pages)
MAX_WORD_BYTES = 131_072
# room left in each bound for what the rule's own words, Snakemake and a job's wrapper add
WORD_MARGIN = 4_096
TOTAL_MARGIN = 65_536
# what each argument or environment string costs besides its bytes: its NUL and its pointer
PER_STRING = 1 + 8


def check_run_commands(plan: Plan, origins: dict[str, str], environ: dict[str, str] | None = None) -> None:
    """PlanError for the first planned run whose record-run command has a word over the
    kernel's per-argument bound, or whose command line and environment together (with
    `environ`, this process's, which the jobs inherit) pass ARG_MAX, both less a margin.
    `origins`: each run configuration's source ("config" or a preset's name)."""
    environ = dict(os.environ) if environ is None else environ
    inherited = sum(_string_bytes(f"{k}={v}") for k, v in environ.items())
    for run in plan.runs:
        if problem := _run_problem(plan, run, inherited):
            key = config_key(origins.get(run.config, "config"), f"run_configs.{run.config}.env")
            raise PlanError(f"{key}: {problem}")


def _run_problem(plan: Plan, run: Run, inherited: int) -> str | None:
    env = run_environment(plan, run)
    env_words = [f"{k}={v}" for k, v in sorted(env.items())]
    resolved = json.dumps(resolved_run(plan, run), sort_keys=True)
    trainer = train_command(plan, run, work_folder(plan.run_set, run.name), f"results/{plan.run_set}/model/x.mjb")
    # record-run's argv; the trainer it starts gets the env words in its environment instead
    words = [resolved, *[word for env_word in env_words for word in ("--env", env_word)], *trainer]
    values = f"{len(env)} value(s) of {sum(len(v) for v in env.values()):,} characters together"
    longest = max(words, key=_string_bytes)
    if _string_bytes(longest) > MAX_WORD_BYTES - WORD_MARGIN:
        what = "the run's resolved configuration (--resolved-json, which records them)" if longest is resolved \
            else "one word"
        return (f"{values} make {what} {_string_bytes(longest):,} bytes on run {run.name}'s command line, over the "
                f"{MAX_WORD_BYTES - WORD_MARGIN:,} one word may have (the kernel's {MAX_WORD_BYTES:,} less a margin): "
                "the run would fail with `Argument list too long`; shorten the values or set fewer")
    total = inherited + sum(_string_bytes(word) for word in [*words, *env_words])
    limit = os.sysconf("SC_ARG_MAX") - TOTAL_MARGIN
    if total > limit:
        return (f"{values} make run {run.name}'s command line and environment {total:,} bytes, over the {limit:,} "
                f"a program may be started with here (ARG_MAX {os.sysconf('SC_ARG_MAX'):,} less a margin, this "
                "process's environment included): the run would fail with `Argument list too long`; shorten the "
                "values or set fewer")
    return None


def _string_bytes(text: str) -> int:
    return len(os.fsencode(text)) + PER_STRING
