"""What the run rule does with a planned run: the trainer's command line, its environment,
what run.json records as its resolved configuration, and a few words for the terminal."""

from __future__ import annotations

import shlex
from dataclasses import asdict

from sacscale.pipeline.overrides import option_words
from sacscale.pipeline.plan_model import Plan, Run, RunConfig
from sacscale.pipeline.run_folder_names import WORK_SUFFIX
from sacscale.trainers.reference_options import DEFAULT_PYTHON


def work_folder(run_set: str, run_name: str) -> str:
    """The folder a run trains into (record-run's --work-dir, the trainer's --log-dir),
    renamed to the run's folder once complete; the reference trainer starts in it."""
    return f"results/{run_set}/runs/.{run_name}{WORK_SUFFIX}"


def train_command(plan: Plan, run: Run, log_dir: str, model: str | None) -> list[str]:
    """The `sacscale train` (or, for `trainer: unilab`, `sacscale train-reference`) argv
    for one run (what the run rule executes)."""
    rc = plan.run_configs[run.config]
    if rc.trainer == "unilab":
        return reference_command(plan, run, log_dir)
    cmd = [
        "sacscale", "train",
        "--devices", rc.devices,
        "--num-envs", str(rc.num_envs),
        "--iterations", str(plan.iterations),
        "--collector-cpu-ids", rc.cpu_pools,
        "--seed", str(run.seed),
        "--log-dir", log_dir,
        "--log-every", str(rc.log_every),
    ]
    if model:
        cmd += ["--model", model]
    if rc.batch_size is not None:
        cmd += ["--batch-size", str(rc.batch_size)]
    if rc.sim_threads is not None:
        cmd += ["--sim-threads", str(rc.sim_threads)]
    if rc.trace:
        cmd += ["--trace"]
    for words in override_arguments(rc):
        cmd += words
    return cmd


def reference_command(plan: Plan, run: Run, log_dir: str) -> list[str]:
    """`sacscale train-reference` for a unilab run: the same devices, envs, iterations,
    seed and CPU pools ('auto': the reference's own default), its own scene (the
    pipeline's model is ours; the reference builds its task from its package)."""
    rc = plan.run_configs[run.config]
    cmd = [
        "sacscale", "train-reference",
        "--devices", rc.devices,
        "--num-envs", str(rc.num_envs),
        "--iterations", str(plan.iterations),
        "--collector-cpu-ids", "" if rc.cpu_pools == "auto" else rc.cpu_pools,
        "--seed", str(run.seed),
        "--log-dir", log_dir,
        "--timeout-s", str(rc.timeout_s),
    ]
    if rc.batch_size is not None:
        cmd += ["--override", f"algo.batch_size={rc.batch_size}"]
    for words in override_arguments(rc):
        cmd += words
    return cmd


def override_arguments(rc: RunConfig) -> list[list[str]]:
    """Each override of `rc` as the words its trainer's command line gets: `--key value` for
    ours, `--override key=value` for the reference (booleans as Hydra writes them)."""
    if rc.trainer != "unilab":
        return [option_words(key, value) for key, value in rc.overrides.items()]
    return [["--override", f"{key}={str(value).lower() if isinstance(value, bool) else value}"]
            for key, value in rc.overrides.items()]


def run_environment(plan: Plan, run: Run) -> dict[str, str]:
    """Environment variables the run rule sets for the trainer (never invented here:
    CUDA_VISIBLE_DEVICES only when the run configuration names it)."""
    rc = plan.run_configs[run.config]
    env = dict(rc.env)
    if rc.cuda_visible_devices is not None:
        env["CUDA_VISIBLE_DEVICES"] = rc.cuda_visible_devices
    return env


# where train-reference finds the config's reference.python and reference.meshes
REFERENCE_VARIABLES = {"python": "SACSCALE_REFERENCE_PYTHON", "meshes": "SACSCALE_REFERENCE_MESHES"}


def rule_environment(plan: Plan, run: Run, reference: dict | None) -> dict[str, str]:
    """The env the run rule hands record-run (its --env words): the run's, and for a run of
    the reference trainer where train-reference finds the reference's interpreter and meshes
    (`reference`: the config's reference section)."""
    env = run_environment(plan, run)
    if plan.run_configs[run.config].trainer == "unilab":
        reference = reference if isinstance(reference, dict) else {}
        env[REFERENCE_VARIABLES["python"]] = str(reference.get("python") or DEFAULT_PYTHON)
        if reference.get("meshes"):
            env[REFERENCE_VARIABLES["meshes"]] = str(reference["meshes"])
    return env


def env_words(env: dict[str, str]) -> list[str]:
    """The env as record-run's --env values, NAME=VALUE, in name order."""
    return [f"{k}={v}" for k, v in sorted(env.items())]


def env_arguments(env: dict[str, str]) -> str:
    """The env as the run rule's shell command holds it: `--env 'NAME=VALUE' ...`."""
    return " ".join(f"--env {shlex.quote(word)}" for word in env_words(env))


def resolved_run(plan: Plan, run: Run) -> dict:
    """What run.json records as the run's resolved configuration."""
    rc = plan.run_configs[run.config]
    return {
        "run": run.name,
        "config": run.config,
        "repeat": run.repeat,
        "index": run.index,
        "seed": run.seed,
        "run_set": plan.run_set,
        "preset": plan.preset,
        "prefix": plan.prefix,
        "iterations": plan.iterations,
        **{k: v for k, v in asdict(rc).items() if k != "name"},
    }


def describe_run(plan: Plan, run: Run) -> str:
    """A run in a few words for the terminal, e.g. '1 CPU rank, 24 iterations, run 1 of 4'."""
    rc = plan.run_configs[run.config]
    n = rc.world_size
    gpus = len(set(rc.devices.split(",")))
    if rc.device_kind == "cpu":
        what = f"{n} CPU rank{'s' if n != 1 else ''}"
    elif n > gpus:  # ranks sharing a GPU: say so, not 'n GPUs'
        what = f"{n} ranks sharing {gpus} GPU{'s' if gpus != 1 else ''}"
    else:
        what = f"{n} GPU{'s' if n != 1 else ''}"
    if rc.cpu_pools != "auto":
        what += f", CPU pools {rc.cpu_pools}"
    if rc.trainer == "unilab":
        what = f"the reference trainer, {what}"
    return f"{what}, {plan.iterations} iterations, run {run.index + 1} of {len(plan.runs)}"
