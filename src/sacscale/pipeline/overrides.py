"""A run configuration's overrides, checked at planning time against the trainer they go to.

Ours (`sacscale train`): each key is exactly one of the trainer's options, not one the
pipeline sets itself, with a value the trainer's own parser and checks accept. The
reference (`sacscale train-reference`): each key is a Hydra key the pipeline does not set.

sacscale.train and sacscale.train.options are light (no torch, no MuJoCo): planning (the
Snakefile's parse, a cluster's login node) imports them.
"""

from __future__ import annotations

import argparse
import math
import re
import shutil
from pathlib import Path

from sacscale.checks import InputError, check_sizes, replay_memory_problem
from sacscale.pipeline.hydra_values import HydraValueError, holds_non_finite
from sacscale.pipeline.plan_values import PlanError, shown
from sacscale.learner_limits import REFERENCE_NETWORKS, learner_size_problem
from sacscale.train import TrainConfig, TrainingError, sac_config
from sacscale.train.config import OWN_OPTIONS, TASK_SIZES
from sacscale.train.options import build_parser, json_setting, option_actions, option_names

# Trainer options the pipeline sets itself (and records in plan.json and run.json): an
# override may not change them behind the record's back. -> where the value comes from.
PIPELINE_OWNED = {
    "devices": "the run configuration's devices",
    "num_envs": "the run configuration's num_envs",
    "batch_size": "the run configuration's batch_size",
    "sim_threads": "the run configuration's sim_threads",
    "collector_cpu_ids": "the run configuration's cpu_pools",
    "log_every": "the run configuration's log_every",
    "trace": "the run configuration's trace",
    "iterations": "the plan's iterations",
    "seed": "the plan's seed (repeat k runs seed + k - 1)",
    "log_dir": "the pipeline (results/<run set>/runs/<run>)",
    "model": "the pipeline's prepared, hashed model (config model.from_mjb)",
    "resume": "the pipeline (every run of a set starts fresh in its own directory)",
}

# Hydra keys of the reference trainer that `sacscale train-reference` sets from the run
# configuration (trainers.unilab.hydra_overrides): overrides may not change them.
REFERENCE_OWNED = ("task", "algo.num_envs", "algo.max_iterations", "algo.seed", "algo.batch_size",
                   "training.log_root", "training.logger", "training.no_play", "training.export_onnx",
                   "training.trace_enabled", "env.scene.model_file", "env.cpu_ids", "training.dp_collector_cpu_ids")
HYDRA_KEY = re.compile(r"\+{0,2}~?[A-Za-z_][A-Za-z0-9_]{0,63}(\.[A-Za-z0-9_]{1,64}){0,16}")


def option_words(key: str, value) -> list[str]:
    """An override as `sacscale train` words: True a flag, False its --no- form, None nothing."""
    flag = "--" + str(key).replace("_", "-")
    if value is True:
        return [flag]
    if value is False:
        return ["--no-" + flag[2:]]
    if value is None:
        return []
    return [flag, str(value)]


def check_override(key: str, value, where: str) -> None:
    """`key` must be exactly one of the trainer's own options (its parser is the one source
    of truth; no abbreviations, no invented names) and not one the pipeline owns."""
    options = option_names()
    flag = option_words(key, value)[:1]
    positive = "--" + key.replace("_", "-")
    _refuse_yaml_boolean(key, value, positive, where)
    if positive not in options or (flag and flag[0] not in options):
        listed = sorted(o for o in options if not o.startswith("--no-"))
        raise PlanError(f"{where}: not an option of `sacscale train` (exact names only: {', '.join(listed)})")
    dest = options[positive]
    if dest in PIPELINE_OWNED:
        raise PlanError(f"{where}: set by the pipeline from {PIPELINE_OWNED[dest]}; not an override")


# the words YAML 1.1 reads, unquoted, as each boolean
_YAML_WORDS = {True: ("on", "yes", "true"), False: ("off", "no", "false")}


def _refuse_yaml_boolean(key: str, value, flag: str, where: str) -> None:
    """A boolean for an option that takes a value is a word YAML 1.1 read unquoted
    (`grad-sync: off` is false): as a flag it named no option, or left the value missing."""
    if not isinstance(value, bool):
        return
    action = option_actions().get(flag)
    if action is None or action.nargs == 0:  # a flag: true and false are its two forms
        return
    words = [w for w in _YAML_WORDS[value] if w in (action.choices or ())]
    if words:
        cure = f'quote the word: {key}: "{words[0]}"'
    else:
        cure = f"give one of {', '.join(action.choices)}" if action.choices else "give the value it takes"
    raise PlanError(f"{where}: YAML read the unquoted value as the boolean {str(value).lower()} "
                    f"(as it reads {', '.join(_YAML_WORDS[value])}), but {flag} takes a value; {cure}")


def check_reference_override(key: str, value, where: str) -> None:
    """An override of a unilab run is one of the reference's Hydra keys (`algo.gamma`),
    passed as `--override KEY=VALUE`; the reference's own Hydra rejects unknown keys when
    the run starts, before anything trains. The keys the pipeline sets are refused here."""
    if not HYDRA_KEY.fullmatch(key) or "." not in key:
        raise PlanError(f"{where}: a unilab run's overrides are the reference's Hydra keys (e.g. algo.gamma), "
                        f"got {key!r}")
    if key.lstrip("+~") in REFERENCE_OWNED:
        raise PlanError(f"{where}: set by the pipeline from the run configuration; not an override")
    if isinstance(value, (dict, list)):
        raise PlanError(f"{where}: give a single value (Hydra's own syntax in a string for lists)")
    if "${" in str(value):  # no committed set or reference command uses one
        raise PlanError(f"{where}: {shown(value)} is an interpolation (${{...}}): the reference's config resolves "
                        "it when it runs, into any value, past this check; give the value itself")
    try:
        not_finite = holds_non_finite(str(value).strip())
    except HydraValueError as exc:  # Hydra refuses it too, when the run starts
        raise PlanError(f"{where}: {shown(value)} is not a value Hydra's override grammar reads: {exc}") from None
    if not_finite:  # Hydra reads inf, nan and 1e400 as floats: a gamma of inf trained as given
        raise PlanError(f"{where}: {shown(value)} is not a finite number")


def check_trainer_values(merged: dict, where) -> None:
    """The overrides' values as `sacscale train` would parse and check them (types, finite
    numbers, `--extra` a JSON object of valid learner settings), at planning time and
    naming the config key, rather than when the run starts hours into the pipeline."""
    parser = build_parser()
    parser.exit_on_error = False
    dests = override_fields(merged["overrides"], where)
    values = {}
    for key, value in merged["overrides"].items():
        values[dests[key]] = _parsed_override(parser, key, value, dests[key], where(f"overrides.{key}"))
    if not values:
        return
    sizes = {k: merged[k] for k in ("num_envs", "batch_size") if merged.get(k) is not None}
    cfg = TrainConfig(**{**sizes, "devices": str(merged.get("devices", "cpu")), **values})
    try:
        cfg.validate()  # the trainer's own checks of its options (choices, ranges), no file or device
    except TrainingError as exc:
        raise PlanError(f"{_override_key(str(exc), merged['overrides'], where)}: {exc}") from None
    if "extra" in values:
        _check_extra(cfg, merged["overrides"], where)


def override_fields(overrides: dict, where) -> dict[str, str]:
    """Each override's TrainConfig field (`no-compile` sets `compile`). Two keys of one
    option (`learner-cpu-ids` and `learner_cpu_ids`, `compile` and `no-compile`) gave the
    trainer the option twice, the last winning without a word: PlanError naming the key."""
    options = option_names()
    fields, first = {}, {}
    for key in overrides:  # each is an option already (check_override)
        field = options["--" + str(key).replace("_", "-")]
        if field in first:
            raise PlanError(f"{where(f'overrides.{key}')}: sets the trainer's --{field.replace('_', '-')} as "
                            f"overrides.{first[field]} does; give it once")
        first[field], fields[key] = key, field
    return fields


def _parsed_override(parser: argparse.ArgumentParser, key: str, value, dest: str, here: str):
    """One override parsed by the trainer's parser: its value, or PlanError naming `here`."""
    def refuse(message: str):  # argparse's error() would print usage and exit
        raise PlanError(f"{here}: {message}")

    parser.error = refuse
    try:
        parsed = vars(parser.parse_args(option_words(key, value)))
    except argparse.ArgumentError as exc:
        refuse(str(exc))
    if isinstance(parsed.get(dest), float) and not math.isfinite(parsed[dest]):
        raise PlanError(f"{here}: {shown(value)} is not a finite number")
    return parsed.get(dest)


def _check_extra(cfg, overrides: dict, where) -> None:
    """`--extra` (of the TrainConfig `cfg`): a JSON object of learner settings the trainer's
    SAC config accepts, whose sizes fit the replay as the trainer checks them at its start
    (`{"batch_size": ...}` or `{"learning_starts": ...}` there passed the plan's own check,
    which reads the run configuration's batch_size)."""
    extra_key = where(f"overrides.{next(k for k in overrides if k.replace('-', '_') == 'extra')}")
    for key in cfg.extra:
        if problem := extra_setting_problem(key):
            raise PlanError(f"{extra_key}: {problem}")
    try:
        check_sizes(cfg, sac_config(cfg))
    except (TrainingError, InputError, TypeError, ValueError) as exc:
        raise PlanError(f"{extra_key}: {exc}") from None


def extra_setting_problem(key: str) -> str | None:
    """Why a run configuration's `overrides.extra` may not give the learner setting `key`
    (the trainer's sac_config refuses the same keys), naming where in the config it goes."""
    if key in TASK_SIZES:
        return f"{key} is the task's own size, which its model fixes; not a learner setting to give"
    if key not in OWN_OPTIONS:
        return None
    flag = OWN_OPTIONS[key]
    dest = option_names()[flag]
    place = PIPELINE_OWNED.get(dest, f"overrides.{flag[2:]}")
    return (f"{key} is set by the trainer's own option {flag} (which the run's records and checks read): "
            f"give it as {place}, not in extra")


def planned_extra_problem(overrides: dict, key: str) -> str | None:
    """A planned run's `overrides.extra` (a hand-edited plan's too) that gives a setting the
    trainer refuses there: a replay size in it passed the replay memory check, which reads
    the run configuration's own options."""
    for spelled in [k for k in overrides if str(k).replace("-", "_") == "extra"]:
        where = f"{key}.overrides.{spelled}"
        try:
            settings = json_setting(str(overrides[spelled]))
        except argparse.ArgumentTypeError as exc:
            return f"{where}: {exc}, as the trainer reads --extra"
        if not isinstance(settings, dict):
            return f"{where}: {shown(overrides[spelled])} is not a JSON object of learner settings"
        for name in settings:
            if problem := extra_setting_problem(name):
                return f"{where}: {problem}"
    return None


def _override_key(message: str, overrides: dict, where) -> str:
    """The config key behind a trainer error (`--env-pipeline must be ...`): the override that
    set the flag it names, else the run configuration's overrides."""
    flag = re.match(r"--([a-z][a-z0-9-]*)", message)
    for key in overrides:
        if flag and key.replace("_", "-") == flag.group(1):
            return where(f"overrides.{key}")
    return where("overrides")


def _overrides(merged: dict) -> dict:
    return {str(k).replace("-", "_"): v for k, v in merged.get("overrides", {}).items()}


def replay_rows_per_env(value) -> int | None:
    """An override's --replay-per-env as the trainer's parser reads it (int() of its text:
    `"1000"` is 1000), None where it reads no whole number."""
    try:
        return int(str(value))
    except ValueError:
        return None


def check_replay_memory(merged: dict, cpu_ranks: int, where) -> None:
    """What the trainer would refuse at start on the CPU, found at planning time: the ranks'
    replays must fit in this machine's memory (a CPU set's runs train where it is planned)."""
    per_env = replay_rows_per_env(_overrides(merged).get("replay_per_env", TrainConfig.replay_per_env))
    num_envs = merged.get("num_envs")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (per_env, num_envs)):
        return  # the type errors are named elsewhere (or by the trainer)
    problem = replay_memory_problem(per_env * num_envs, cpu_ranks)
    if problem:
        raise PlanError(f"{where('num_envs')}: {num_envs} envs x {per_env} replay rows per env "
                        f"(overrides.replay-per-env): {problem}")


def check_batch_fits_replay(merged: dict, where) -> None:
    """What the trainer would refuse at start (sacscale.checks.check_sizes), found at
    planning time: the batch, and the default learning start, must fit in the replay."""
    overrides = _overrides(merged)
    per_env = overrides.get("replay_per_env", TrainConfig.replay_per_env)
    batch = merged.get("batch_size") or overrides.get("batch_size", TrainConfig.batch_size)
    num_envs = merged.get("num_envs")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (per_env, batch, num_envs)):
        return  # the type errors are named elsewhere (or by the trainer)
    capacity = per_env * num_envs
    if batch > capacity:
        raise PlanError(f"{where('batch_size')}: {batch} is larger than the replay "
                        f"({per_env} rows per env x num_envs {num_envs} = {capacity} rows)")
    if 10 * num_envs > capacity and "extra" not in overrides:
        raise PlanError(f"{where('overrides.replay-per-env')}: {per_env} rows per env hold less than the "
                        f"learning start (10 x num_envs = {10 * num_envs} rows)")
    if "extra" not in overrides:  # with one, check_trainer_values judges the batch with its networks
        if problem := learner_size_problem({**REFERENCE_NETWORKS, "batch_size": batch}, lambda name: name):
            raise PlanError(f"{where('batch_size')}: {problem}")


def check_disk_asked(merged: dict, log_dir: str, where) -> None:
    """--min-free-mb against the whole disk a run's `log_dir` lies on (this machine's, where
    its runs train): more than the disk holds in all, every run's trainer refused it at its
    start, after the set's environment check, model and probe had run."""
    value = _overrides(merged).get("min_free_mb")
    try:
        asked = float(str(value))
    except ValueError:
        return  # not given (None: the trainer's default), or named by check_trainer_values
    folder = Path(log_dir).absolute()
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    total = shutil.disk_usage(folder).total / 2**20  # MB as the trainer counts them
    if asked > total:
        key = next(k for k in merged["overrides"] if str(k).replace("-", "_") == "min_free_mb")
        raise PlanError(f"{where(f'overrides.{key}')}: {asked:g} MB of free disk asked of each run, more than the "
                        f"disk its run folder {log_dir} lies on holds in all ({total:,.0f} MB, at {folder}): "
                        "no run could start")
