"""A planned run's command line, held at planning to what the kernel lets a program start with.

The run rule is a `shell:` rule: Snakemake hands bash its whole command as one word
(`bash -c`), and that command holds the run's resolved configuration as one JSON word
(`--resolved-json`, which records the run's env too), each env variable again as an `--env`
word, and the trainer's command after `--`; record-run starts the trainer with that env.
Each env value may be 4,096 characters, so together they could make the command past the
kernel's bound on a single argument (MAX_ARG_STRLEN, 128 KiB), or a command line and
environment past ARG_MAX: the run then failed with `Argument list too long` after the jobs
before it ran, and every rerun alike. Refused here, naming the run configuration's env (or
the environment the pipeline was started with, where that is the larger part)."""

from __future__ import annotations

import json
import os
import shlex

from sacscale.pipeline.plan_model import Plan, Run
from sacscale.pipeline.plan_values import PlanError, config_key
from sacscale.pipeline.run_commands import (
    REFERENCE_VARIABLES,
    env_arguments,
    env_words,
    resolved_run,
    rule_environment,
    run_environment,
    train_command,
    work_folder,
)

# the kernel's bound on one argument or environment string (MAX_ARG_STRLEN: 32 pages)
MAX_WORD_BYTES = 131_072
# room left in each bound for what the rule's own words, Snakemake and a job's wrapper add
WORD_MARGIN = 4_096
TOTAL_MARGIN = 65_536
# what each argument or environment string costs besides its bytes: its NUL and its pointer
PER_STRING = 1 + 8


def check_run_commands(plan: Plan, origins: dict[str, str], environ: dict[str, str] | None = None,
                       reference: dict | None = None) -> None:
    """PlanError for the first planned run whose shell command (the one word bash gets) is
    over the kernel's per-argument bound, or whose command line and environment together
    (with `environ`, this process's, which the jobs inherit) pass ARG_MAX, both less a
    margin. `origins`: each run configuration's source ("config" or a preset's name);
    `reference`: the config's reference section, whose interpreter and meshes a reference
    run's command holds too."""
    environ = dict(os.environ) if environ is None else environ
    inherited = sum(_string_bytes(f"{k}={v}") for k, v in environ.items())
    for run in plan.runs:
        key = config_key(origins.get(run.config, "config"), f"run_configs.{run.config}.env")
        env = rule_environment(plan, run, reference)
        key += _reference_keys(env, run_environment(plan, run))
        values = f"{len(env)} value(s) of {sum(len(v) for v in env.values()):,} characters together"
        line = shell_line(plan, run, reference)
        if _string_bytes(line) > MAX_WORD_BYTES - WORD_MARGIN:
            raise PlanError(
                f"{key}: {values} make run {run.name}'s shell command {_string_bytes(line):,} bytes (the run rule "
                "hands bash its whole command as one word, and the values are in it twice: in --resolved-json and "
                f"in the --env words), over the {MAX_WORD_BYTES - WORD_MARGIN:,} one word may have (the kernel's "
                f"{MAX_WORD_BYTES:,} less a margin): the run would fail with `Argument list too long`; shorten the "
                "values or set fewer")
        own = sum(_string_bytes(word) for word in [*_record_run_words(plan, run, env), *env_words(env)])
        limit = arg_max() - TOTAL_MARGIN
        if inherited + own > limit:
            raise PlanError(_over_arg_max(key, values, run, own, inherited, environ, limit))


def shell_line(plan: Plan, run: Run, reference: dict | None = None) -> str:
    """The run rule's shell command (workflow/rules/train.smk train_run) as Snakemake renders
    it for `run`: its paths are the rule's, its env words come from the function the rule's
    own do (rule_environment), Snakemake's own prefix is left to the margin."""
    run_json = f"results/{plan.run_set}/runs/{run.name}/run.json"
    words = [
        "sacscale", "record-run", "--run-dir", os.path.dirname(run_json),
        "--work-dir", work_folder(plan.run_set, run.name), "--attic", f"logs/{plan.run_set}/attempts",
        "--state-dir", f"logs/{plan.run_set}/learning_state",
        "--resolved-json", _resolved(plan, run), "--timeout", str(plan.run_configs[run.config].timeout_s),
        "--machine-lock", "--log", f"logs/{plan.run_set}/train/{run.name}.log",
    ]
    env_args = env_arguments(rule_environment(plan, run, reference))
    return f"{shlex.join(words)} {env_args} -- {shlex.join(_trainer(plan, run))}"


def _record_run_words(plan: Plan, run: Run, env: dict[str, str]) -> list[str]:
    """record-run's argv as far as the env makes it long; the trainer it starts gets the env
    words in its environment instead."""
    env_options = [word for env_word in env_words(env) for word in ("--env", env_word)]
    return [_resolved(plan, run), *env_options, *_trainer(plan, run)]


def _over_arg_max(key: str, values: str, run: Run, own: int, inherited: int, environ: dict[str, str],
                  limit: int) -> str:
    """The message for a run over ARG_MAX: naming the environment this process was started
    with where it is the larger part, else the run configuration's env."""
    total = own + inherited
    where = (f"over the {limit:,} a program may be started with here (ARG_MAX {arg_max():,} less a "
             "margin, this process's environment included): the run would fail with `Argument list too long`")
    if inherited >= own:
        largest = sorted(environ, key=lambda name: -len(environ[name]))[:3]
        return (f"the environment this pipeline was started with ({len(environ)} variable(s), {inherited:,} bytes, "
                f"which every job inherits) and run {run.name}'s command line ({own:,} bytes) make {total:,} bytes, "
                f"{where}; unset or shorten its largest variables ({', '.join(largest)}) before starting the pipeline")
    return f"{key}: {values} make run {run.name}'s command line and environment {total:,} bytes, {where}; shorten " \
           "the values or set fewer"


def _reference_keys(env: dict[str, str], run_env: dict[str, str]) -> str:
    """' with reference.python ...' for the values a reference run's command holds from the
    config's reference section besides its own env."""
    added = [f"reference.{key}" for key, name in REFERENCE_VARIABLES.items() if env.get(name) != run_env.get(name)]
    return f" with {' and '.join(added)}" if added else ""


def arg_max() -> int:
    """The kernel's bound on a program's command line and environment together (ARG_MAX)."""
    return os.sysconf("SC_ARG_MAX")


def _resolved(plan: Plan, run: Run) -> str:
    return json.dumps(resolved_run(plan, run), sort_keys=True)


def _trainer(plan: Plan, run: Run) -> list[str]:
    model = f"results/{plan.run_set}/model/g1_walk_flat.mjb"  # the rule's model_file()
    return train_command(plan, run, work_folder(plan.run_set, run.name), model)


def _string_bytes(text: str) -> int:
    return len(os.fsencode(text)) + PER_STRING
