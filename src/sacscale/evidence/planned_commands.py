"""A run's command and resolved configuration as the planner's own code makes them of its
plan.json entries (sacscale.pipeline.run_commands: train_command, reference_command,
resolved_run), against what run.json recorded. The records are compared with each other
elsewhere, so a setting moved alike in all of them (the command, its line, the resolved
configuration, train_meta.json) passes there; here the plan gives the words each must hold.

Options and keys that records._facts already compares with the plan (seed, iterations,
devices, envs, CPU pools, trainer, world size, names; planned_runs the prefix and index)
are left to them, so that each difference is named once. run.json env_set is compared with the plan by
record_fields.env_set_problems (what run_environment gives, beside the reference trainer's
own variables)."""

from __future__ import annotations

from dataclasses import MISSING, fields

from sacscale.evidence.result import same_value
from sacscale.pipeline.runplan import Plan, Run, RunConfig, resolved_run, train_command, work_folder

# compared with the plan by records._facts (the prefix and index by planned_runs.position_facts;
# the model by records._check_where_and_what)
COMPARED_OPTIONS = ("--seed", "--iterations", "--devices", "--num-envs", "--collector-cpu-ids")
COMPARED_KEYS = ("run", "config", "repeat", "seed", "run_set", "iterations", "devices", "cpu_pools", "trainer",
                 "world_size", "prefix", "index")


class PlanNotRebuilt(ValueError):
    """plan.json cannot be read into the planner's model (named with the field)."""


def _entry(cls, data, where: str):
    """`cls` (a dataclass of the plan model) from plan.json's entry `data` at `where`."""
    if not isinstance(data, dict):
        raise PlanNotRebuilt(f"{where} is not an object, as the planner writes it")
    known = {f.name for f in fields(cls)}
    unknown = sorted(str(k) for k in data if k not in known)
    if unknown:
        raise PlanNotRebuilt(f"{where}.{unknown[0][:40]} is no field the planner writes")
    missing = [f.name for f in fields(cls)
               if f.name not in data and f.default is MISSING and f.default_factory is MISSING]
    if missing:
        raise PlanNotRebuilt(f"{where} has no {missing[0]}, which the planner writes")
    return cls(**data)


def plan_model(plan: dict) -> Plan:
    """plan.json read into the planner's Plan, as planning made it (the fields planning
    writes beside the model's, if any, are not the commands' and are left out)."""
    configs = plan.get("run_configs")
    runs = plan.get("runs")
    if not isinstance(configs, dict) or not isinstance(runs, list):
        raise PlanNotRebuilt("plan.json run_configs or runs is not what the planner writes")
    model = {f.name for f in fields(Plan)}
    top = {k: v for k, v in plan.items() if k in model}
    top["run_configs"] = {key: _entry(RunConfig, rc, f"plan.json run_configs.{key}") for key, rc in configs.items()}
    top["runs"] = [_entry(Run, r, f"plan.json runs[{i}]") for i, r in enumerate(runs)]
    return _entry(Plan, top, "plan.json")


def plan_shape_problems(plan: Plan) -> list[str]:
    """What the planner's model holds by construction: a run configuration's name is its
    key (a run's index, its position, is planned_runs.run_order_problems')."""
    return [f"plan.json run_configs.{key}.name {str(rc.name)[:80]!r} is not its key, as the planner writes it"
            for key, rc in plan.run_configs.items() if rc.name != key]


def _recorded_path(command: list[str], option: str) -> str | None:
    """The word after `option` in the recorded command, or None."""
    return command[command.index(option) + 1] if option in command[:-1] else None


def planned_command(plan: Plan, run: Run, recorded: list[str]) -> list[str]:
    """The command the planner makes of the run's plan entries. The log folder and the model
    file are the machine's own words (where the workflow wrote them, relative to its
    folder): they are taken from the recorded command (the model's is checked against the
    set's hashed model elsewhere); a command without a log folder gets the planner's."""
    log_dir = _recorded_path(recorded, "--log-dir") or work_folder(plan.run_set, run.name)
    return train_command(plan, run, log_dir, _recorded_path(recorded, "--model"))


def _options(words: list[str]) -> dict[str, str | None]:
    """A command's options after its two words: {option: its value, None for a flag}; the
    reference's repeated `--override key=value` keyed by `--override key`."""
    out: dict[str, str | None] = {}
    i = 2
    while i < len(words):
        option, value = words[i], None
        if i + 1 < len(words) and not words[i + 1].startswith("--"):
            value = words[i + 1]
            i += 1
        if option == "--override" and value is not None and "=" in value:
            key, value = value.split("=", 1)
            option = f"--override {key}"
        out[option] = value
        i += 1
    return out


def _words(option: str, value: str | None) -> str:
    return option if value is None else f"{option} {value!r}" if value == "" else f"{option} {value}"


def command_problems(name: str, config: str, recorded: list[str], planned: list[str]) -> list[str]:
    """Each option of the run's recorded command whose words are not the planner's."""
    have, want = _options(recorded), _options(planned)
    source = f"plan.json run_configs.{config}"
    out = []
    for option in [o for o in want if o not in COMPARED_OPTIONS] + [o for o in have if o not in want]:
        if option in COMPARED_OPTIONS:
            continue
        if option not in have:
            given = "it" if want[option] is None else want[option]
            out.append(f"{name}: run.json command has no {option}, but {source} gives {given}")
        elif option not in want:
            out.append(f"{name}: run.json command {_words(option, have[option])}, but {source} does not give it")
        elif have[option] != want[option]:
            out.append(f"{name}: run.json command {_words(option, have[option])}, but {source} gives {want[option]}")
    if not out and have == want and recorded != planned:
        out.append(f"{name}: run.json command holds the options {source} gives in other words (their order or "
                   "repeats): not the planner's command")
    return out


def _value_source(key: str, plan: Plan, run: Run) -> str:
    if key in ("preset", "prefix"):
        return f"plan.json {key}"
    return f"plan.json runs[{run.index}].index" if key == "index" else f"plan.json run_configs.{run.config}"


def resolved_problems(name: str, recorded: dict, planned: dict, plan: Plan, run: Run) -> list[str]:
    """Each key of run.json resolved_config (an object's keys one by one) that is not what
    resolved_run gives."""
    out = []
    for key in [k for k in planned if k not in COMPARED_KEYS] + [k for k in recorded if k not in planned]:
        source = _value_source(key, plan, run)
        if key not in recorded:
            out.append(f"{name}: run.json resolved_config has no {key}, but {source} gives {planned[key]!r}")
        elif key not in planned:
            out.append(f"{name}: run.json resolved_config.{str(key)[:40]} {_shown(recorded[key])}, which the planner "
                       "does not write")
        elif isinstance(planned[key], dict) and isinstance(recorded[key], dict):
            out += _object_problems(name, f"resolved_config.{key}", recorded[key], planned[key], source)
        elif not same_value(recorded[key], planned[key]):
            out.append(f"{name}: run.json resolved_config.{key} {_shown(recorded[key])}, but {source} gives "
                       f"{_shown(planned[key])}")
    return out


def _object_problems(name: str, field: str, recorded: dict, planned: dict, source: str) -> list[str]:
    out = []
    for key in list(planned) + [k for k in recorded if k not in planned]:
        if key not in recorded:
            out.append(f"{name}: run.json {field} has no {key}, but {source} gives {_shown(planned[key])}")
        elif key not in planned:
            out.append(f"{name}: run.json {field}.{str(key)[:40]} {_shown(recorded[key])}, but {source} does not "
                       "give it")
        elif not same_value(recorded[key], planned[key]):
            out.append(f"{name}: run.json {field}.{key} {_shown(recorded[key])}, but {source} gives "
                       f"{_shown(planned[key])}")
    return out


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def planned_run_problems(plan: Plan, name: str, run_record: dict) -> list[str]:
    """The run's recorded command and resolved configuration against the planner's."""
    run = plan.run(name)
    command = run_record.get("command")
    resolved = run_record.get("resolved_config")
    try:
        planned = planned_command(plan, run, command)
        planned_resolved = resolved_run(plan, run)
    except (TypeError, ValueError, AttributeError) as exc:  # a hand-edited value the planner never writes
        return [f"{name}: plan.json run_configs.{run.config}: the planner's code cannot rebuild the run's command "
                f"from it ({str(exc)[:120]})"]
    out = command_problems(name, run.config, command, planned)
    if isinstance(resolved, dict):
        out += resolved_problems(name, resolved, planned_resolved, plan, run)
    return out
