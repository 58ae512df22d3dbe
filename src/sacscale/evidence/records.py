"""The records of a set made by the pipeline agree: plan.json -> run.json (its command
parsed by the trainer's own parser) -> train_meta.json -> the metrics, on seed,
iterations, devices, CPU pools, world size, model (hash); and what environment.json states
again (sacscale.evidence.shared_facts): code commit and dirty flag, torch and Python
versions, the stored diff and the CPUs; and the fields derived from what they describe:
model.json (model_record), plan.json's description (preset_record), train_meta.json's
collector pools (pool_record), its options, devices, fault counters and state hashes
(train_meta_record) and run.json's status and command line (wrapper_record); in a set made by
this code, each run's command and resolved configuration as the planner's code rebuilds them
from plan.json (planned_commands)."""

from __future__ import annotations

import contextlib
import io
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from sacscale.evidence.checkpoint_config import checkpoint_config_findings
from sacscale.evidence.code_record import git_error_problems
from sacscale.evidence.env_steps import env_step_problems
from sacscale.evidence.manifest import sha256_file
from sacscale.evidence.model_record import MODEL_FILE, cost_problems, name_problems, summary_findings
from sacscale.evidence.shared_facts import ABSENT as _ABSENT
from sacscale.evidence.shared_facts import (
    cpu_findings,
    dirty_problems,
    git_record_findings,
    gpu_problems,
    gpu_use_problems,
    in_checkout,
    pool_findings,
    run_facts,
    set_facts,
)
from sacscale.evidence.environment_text import environment_text_findings
from sacscale.evidence.shared_facts import opt as _opt
from sacscale.evidence.record_fields import env_set_problems, meta_problems, model_problems
from sacscale.evidence.planned_commands import PlanNotRebuilt, plan_model, plan_shape_problems, planned_run_problems
from sacscale.evidence.planned_runs import (
    plan_value_problems,
    planned_seed,
    position_facts,
    run_name_problems,
    run_order_problems,
    seed_problems,
)
from sacscale.evidence.pool_record import pool_record_problems
from sacscale.evidence.preset_record import preset_findings
from sacscale.evidence.recorded_commit import commit_findings, earliest_start, null_commit_problems
from sacscale.evidence.recorded_time import recorded_at_findings
from sacscale.evidence.stored_diff import (
    diff_apply_findings,
    diff_findings,
    dirty_without_diff_problems,
    listed_change_problems,
    listed_name_problems,
)
from sacscale.evidence import scope
from sacscale.evidence.result import OLDER, EvidenceStructureError, Verification, get_field, load_json, same_value
from sacscale.evidence.train_meta_record import train_meta_problems
from sacscale.evidence.wrapper_record import wrapper_problems
from sacscale.pipeline.runplan import PlanError, check_override, check_reference_override
from sacscale.train.options import build_parser
from sacscale.trainers.reference_options import build_parser as reference_parser
from sacscale.usage import SILENT, StageLines


def _trainer_args(command: list, rel: str):
    """The run's `sacscale train` (or `sacscale train-reference`, the reference trainer)
    command parsed by that command's own parser."""
    if not (isinstance(command, list) and command[:2] in (["sacscale", "train"], ["sacscale", "train-reference"])
            and all(isinstance(a, str) for a in command)):
        raise EvidenceStructureError(f"{rel}: command is not a `sacscale train ...` argument list")
    parser = build_parser() if command[1] == "train" else reference_parser()
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            return parser.parse_args(command[2:])
    except SystemExit:
        msg = err.getvalue().strip().splitlines()[-1:] or ["unparsable"]
        raise EvidenceStructureError(f"{rel}: command does not parse with the trainer's parser: {msg[0]}") from None


def _agree(result: Verification, run: str, facts: dict[str, list[tuple[str, object]]], strict: bool = False) -> None:
    """facts: {quantity: [(source, value), ...]}; every recorded value must equal the first.
    A value a source does not record: a note, or with `strict` (a current set) a problem."""
    for quantity, sources in facts.items():
        recorded = [(src, val) for src, val in sources if val is not _ABSENT]
        for src, val in sources:
            if val is _ABSENT:
                (result.records if strict else result.notes).append(f"{run}: {quantity} in {src}: {OLDER}")
        if not recorded:
            continue
        first_src, first = recorded[0]
        for src, val in recorded[1:]:
            if not same_value(val, first):
                result.records.append(f"{run}: {quantity}: {first_src} says {first!r}, {src} says {val!r}")


def _where(record: dict):
    """The host a record was made on (and its SLURM node, inside a job), or _ABSENT."""
    host = _opt(record, "host", "name")
    if host is _ABSENT:
        return _ABSENT
    node = _opt(record, "host", "slurm", "SLURMD_NODENAME")
    return f"host {host!r}" + ("" if node is _ABSENT else f" (SLURM node {node!r})")


@dataclass
class RunRecords:
    """One planned run's records, as read from its files (absent files: empty)."""
    name: str
    entry: dict          # its plan.json runs entry
    config: dict         # its plan.json run_configs entry
    run: dict            # run.json
    resolved: dict       # run.json resolved_config
    args: object         # run.json command, parsed by its trainer's parser
    meta: dict           # train_meta.json
    meta_config: dict    # train_meta.json config
    metrics: dict        # metrics/{run}.json
    reference: bool      # run by the reference trainer (train-reference)

    @property
    def rel_run(self) -> str:
        return f"runs/{self.name}/run.json"


def _optional_json(root: Path, rel: str) -> dict:
    return load_json(root, rel) if (root / rel).is_file() else {}


def _read_run(root: Path, entry: dict, configs: dict) -> RunRecords:
    name = entry["name"]
    config = configs.get(entry.get("config"))
    if not isinstance(config, dict):
        raise EvidenceStructureError(f"plan.json: runs entry {name}: config {entry.get('config')!r} has no "
                                     "run_configs entry")
    rel_run = f"runs/{name}/run.json"
    run = load_json(root, rel_run)
    resolved = get_field(run, rel_run, "resolved_config", kind=dict)
    args = _trainer_args(run.get("command"), rel_run)
    meta = _optional_json(root, f"runs/{name}/train_meta.json")
    meta_config = meta.get("config") if isinstance(meta.get("config"), dict) else {}
    reference = run.get("command", [None, None])[1] == "train-reference"
    if reference and meta_config.get("collector_cpu_ids") == "":
        meta_config = {**meta_config, "collector_cpu_ids": "auto"}  # the reference's own default
    return RunRecords(name, entry, config, run, resolved, args, meta, meta_config,
                      _optional_json(root, f"metrics/{name}.json"), reference)


def _facts(r: RunRecords, iterations: int, env: dict, run_set=_ABSENT) -> dict[str, list[tuple[str, object]]]:
    """{quantity: [(source, value), ...]} of one run, for _agree."""
    resolved, mcfg, metrics = r.resolved, r.meta_config, r.metrics
    command_pools = r.args.collector_cpu_ids
    if r.reference and command_pools == "":
        command_pools = "auto"  # train-reference: empty means the reference's own default
    return {
        # a run of another set (or another run of this one) put here under this run's name
        "run set": [("plan.json", run_set), ("run.json resolved_config", resolved.get("run_set", _ABSENT))],
        "run name": [("plan.json", r.name), ("run.json resolved_config", resolved.get("run", _ABSENT)),
                     ("metrics", metrics.get("run", _ABSENT))],
        "seed": [("plan.json", r.entry.get("seed")), ("run.json", r.run.get("seed", _ABSENT)),
                 ("run.json resolved_config", resolved.get("seed", _ABSENT)),
                 ("run.json command", r.args.seed), ("train_meta.json", mcfg.get("seed", _ABSENT))],
        "iterations": [("plan.json", iterations), ("run.json resolved_config", resolved.get("iterations", _ABSENT)),
                       ("run.json command", r.args.iterations),
                       ("train_meta.json", mcfg.get("iterations", _ABSENT))],
        "configuration": [("plan.json", r.entry.get("config")),
                          ("run.json resolved_config", resolved.get("config", _ABSENT)),
                          ("metrics", metrics.get("config", _ABSENT))],
        "repeat": [("plan.json", r.entry.get("repeat")), ("run.json resolved_config", resolved.get("repeat", _ABSENT)),
                   ("metrics", metrics.get("repeat", _ABSENT))],
        "devices": [("plan.json", r.config.get("devices")),
                    ("run.json resolved_config", resolved.get("devices", _ABSENT)),
                    ("run.json command", r.args.devices), ("train_meta.json", mcfg.get("devices", _ABSENT)),
                    ("metrics", metrics.get("devices", _ABSENT))],
        "CPU pools": [("plan.json", r.config.get("cpu_pools")),
                      ("run.json resolved_config", resolved.get("cpu_pools", _ABSENT)),
                      ("run.json command", command_pools),
                      ("train_meta.json", mcfg.get("collector_cpu_ids", _ABSENT))],
        # the trainer of the run config (the page's trainers table) is the one its command ran
        "trainer": [("plan.json", r.config.get("trainer") or "sacscale"),  # the planner's default
                    ("run.json resolved_config", resolved.get("trainer", _ABSENT)),
                    ("run.json command", "unilab" if r.reference else "sacscale")],
        "envs per rank": [("plan.json", r.config.get("num_envs")), ("run.json command", r.args.num_envs),
                          ("train_meta.json", mcfg.get("num_envs", _ABSENT))],
        "world size": [("plan.json", r.config.get("world_size")),
                       ("run.json resolved_config", resolved.get("world_size", _ABSENT)),
                       ("train_meta.json", r.meta.get("world_size", _ABSENT)),
                       ("metrics", metrics.get("world_size", _ABSENT))],
        # the reference trainer builds its task from its own package: no model file
        **({} if r.reference else {"model file": [("run.json command", getattr(r.args, "model", None)),
                                                  ("train_meta.json", mcfg.get("model", _ABSENT))]}),
        # what environment.json states again: the code's commit and dirty flag, torch, Python
        **run_facts(env, r.run, r.meta, r.reference),
    }


def _recorded_seeds(r: RunRecords) -> list[tuple[str, object]]:
    """The run's seed in each record that holds it (for planned_runs.seed_problems)."""
    return [("plan.json runs[].seed", r.entry.get("seed")), ("run.json seed", r.run.get("seed", _ABSENT)),
            ("run.json resolved_config.seed", r.resolved.get("seed", _ABSENT)),
            ("run.json command --seed", r.args.seed),
            ("train_meta.json config.seed", r.meta_config.get("seed", _ABSENT))]


def _check_where_and_what(root: Path, r: RunRecords, env_host, model_hash: str | None, result: Verification) -> None:
    """The run's host, model file, overrides and status."""
    # the environment describes the runs only if it was recorded where they ran (sets
    # recorded before hosts were recorded have neither)
    run_host = _where(r.run)
    if env_host is not _ABSENT and run_host is not _ABSENT and env_host != run_host:
        result.records.append(f"{r.name}: host: environment.json was recorded on {env_host}, "
                              f"the run ran on {run_host}")
    model_arg = getattr(r.args, "model", None)
    if model_hash is not None and model_arg is not None \
            and not str(model_arg).endswith(f"{root.name}/model/{MODEL_FILE}"):
        result.records.append(f"{r.name}: the run's --model {model_arg} is not this set's hashed model "
                              f"(model/{MODEL_FILE})")
    check = check_reference_override if r.reference else check_override
    for key, value in (r.resolved.get("overrides") or {}).items():
        try:
            check(str(key), value, f"{r.rel_run}: overrides.{key}")
        except PlanError as exc:
            result.records.append(f"{r.name}: {exc}")
    _check_counts_and_times(r, result)
    if r.run and (r.run.get("status", "completed") != "completed" or r.run.get("exit_status", 0) != 0):
        # the run wrapper's verdict: a failed, timed-out or interrupted run is no evidence
        result.records.append(f"{r.name}: run.json status {str(r.run.get('status'))[:40]!r}, exit status "
                              f"{str(r.run.get('exit_status'))[:20]}: not a completed run")
    if r.meta and r.meta.get("status", "completed") != "completed":
        result.records.append(f"{r.name}: train_meta.json status {r.meta.get('status')!r}, not 'completed'")


def _epoch(stamp) -> float | None:
    try:
        return datetime.fromisoformat(stamp).timestamp() if isinstance(stamp, str) else None
    except ValueError:
        return None


def _without_offset(stamp) -> bool:
    """An ISO time Python reads, without its UTC offset: the pipeline records each time with
    one, and a time without cannot be compared with the set's other times."""
    try:
        return isinstance(stamp, str) and datetime.fromisoformat(stamp).utcoffset() is None
    except ValueError:
        return False


def _check_counts_and_times(r: RunRecords, result: Verification) -> None:
    """Fields recorded twice in other words: rank 0's env steps (train_meta.json) times the
    ranks are the events' total; run.json's timeout is the plan's; its ISO times are its
    epoch times. Only where both sides are recorded (older sets and the reference lack some)."""
    steps, ranks, total = r.meta.get("rank0_env_steps"), r.meta.get("world_size"), r.metrics.get("total_env_steps")
    if all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (steps, ranks, total)) \
            and steps * ranks != total:
        result.records.append(f"{r.name}: env steps: train_meta.json says rank 0 took {steps!r} "
                              f"({ranks!r} rank(s)), the events {total!r} in all")
    planned, ran = r.config.get("timeout_s"), r.run.get("timeout_s")
    if planned is not None and ran is not None and not same_value(planned, ran):
        result.records.append(f"{r.name}: timeout: plan.json says {planned!r} s, run.json {ran!r} s")
    for iso, epoch in (("started_at", "start_time"), ("ended_at", "end_time")):
        if _without_offset(r.run.get(iso)):
            result.records.append(f"runs/{r.name}/run.json: {iso} {str(r.run[iso])[:40]!r}: not a time with its UTC "
                                  "offset, as the pipeline records")
            continue
        when, at = _epoch(r.run.get(iso)), r.run.get(epoch)
        if iso in r.run and epoch in r.run and (when is None or not isinstance(at, (int, float))
                                                or abs(when - at) > 1):
            result.records.append(f"{r.name}: run.json {iso} {str(r.run.get(iso))[:40]!r} is not its "
                                  f"{epoch} {str(at)[:40]}")


def _present_runs(root: Path, planned: list, result: Verification) -> list[str]:
    """The planned runs that have evidence; missing and unplanned runs are problems."""
    names = []
    for i, entry in enumerate(planned):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise EvidenceStructureError(f"plan.json: runs[{i}] has no name")
        names.append(entry["name"])
    present = sorted(p.name for p in (root / "runs").glob("*") if p.is_dir() and not p.name.startswith("."))
    absent = [n for n in names if n not in present]
    if absent:
        result.records.append(f"runs: plan.json lists {len(names)} runs, {len(names) - len(absent)} have "
                              f"evidence; missing: {', '.join(absent)}")
    unplanned = sorted(set(present) - set(names))
    if unplanned:
        result.records.append(f"runs: not in plan.json: {', '.join(unplanned)}")
    return present


def check_records(root: Path, plan: dict, result: Verification, strict: bool = False,
                  progress: StageLines = SILENT) -> None:
    planned = get_field(plan, "plan.json", "runs", kind=list)
    configs = get_field(plan, "plan.json", "run_configs", kind=dict)
    iterations = get_field(plan, "plan.json", "iterations", kind=int)
    present = _present_runs(root, planned, result)
    _check_set_name(root, plan, result)
    made_here = strict and scope.format_of(root) >= scope.FORMAT  # as required_fields decides it
    result.records += plan_value_problems(plan, made_here) + run_name_problems(plan) + run_order_problems(plan)
    model_hash = _model_hash(root, plan, result)
    env = _optional_json(root, "environment.json")
    env_host = _where(env) if env else _ABSENT
    _check_environment(root, env, result, strict, made_here)
    result.records += _probe_gpu_use(root, plan, env)
    problems, not_compared, notes = preset_findings(root, plan, env)
    result.records += problems
    result.covered += not_compared
    result.notes += notes
    if (root / "model.json").is_file():
        _check_model_record(root, load_json(root, "model.json"), plan, env, result)
    commits = [("environment.json project.commit", _opt(env, "project", "commit"))]
    code_records = [("environment.json project", _opt(env, "project")),
                    ("environment.json workdir.git", _opt(env, "workdir", "git"))]
    starts = []
    left_out = scope.left_out_hashes(root)
    rebuilt = _rebuilt_plan(plan, result) if made_here else None
    for done, entry in enumerate(planned, 1):
        progress.item(f"run {done}/{len(planned)}: {entry['name']}")
        if entry["name"] in present:
            r = _read_run(root, entry, configs)
            commits.append((f"{r.name}: run.json code.commit", _opt(r.run, "code", "commit")))
            starts.append(r.run.get("start_time"))
            code_records.append((f"runs/{r.name}/run.json code", r.run.get("code")))
            facts = _facts(r, iterations, env, plan.get("run_set", _ABSENT))
            facts.update(position_facts(plan, r.entry, r.resolved))
            _agree(result, r.name, facts, strict)
            result.records += seed_problems(r.name, planned_seed(plan, r.entry), _recorded_seeds(r))
            result.records += planned_run_problems(rebuilt, r.name, r.run) if rebuilt is not None else []
            _check_where_and_what(root, r, env_host, model_hash, result)
            problems, notes = pool_findings(r.name, env, r.meta, made_here)
            result.records += problems + (_gpu_use(r, env) if env else [])
            result.notes += notes
            result.records += env_step_problems(r.name, r.args.num_envs, iterations, r.meta, r.metrics)
            result.records += meta_problems(r.name, r.meta, r.args, r.reference)
            result.records += env_set_problems(r.name, r.run, r.config, r.reference)
            result.records += wrapper_problems(r.name, r.run)
            result.records += pool_record_problems(r.name, r.meta, r.args, r.reference)
            result.records += train_meta_problems(root / "runs" / r.name, r.name, r.meta, r.run, r.args, r.reference,
                                                  strict)
            problems, notes = checkpoint_config_findings(root, r.name, r.meta_config, left_out, r.reference,
                                                        made_here)
            result.records += problems
            result.notes += notes
    # the page tells its reader to check the commit out
    problems, notes = commit_findings(commits, earliest_start(_opt(env, "recorded_at"), starts), made_here)
    result.records += problems + null_commit_problems(commits, strict and in_checkout(env))
    result.notes += notes
    result.records += git_error_problems(code_records)
    problems, notes = recorded_at_findings(env, starts, made_here)
    result.records += problems
    result.notes += notes


def _rebuilt_plan(plan: dict, result: Verification):
    """plan.json in the planner's model, to rebuild each run's command and resolved
    configuration with the planner's code: for a set made by this code only (an older set's
    runs were planned by older code), or None where it cannot be read into the model."""
    try:
        rebuilt = plan_model(plan)
    except PlanNotRebuilt as exc:
        result.records.append(f"{exc}: the runs' commands cannot be rebuilt from it")
        return None
    result.records += plan_shape_problems(rebuilt)
    return rebuilt


def _probe_gpu_use(root: Path, plan: dict, env: dict) -> list[str]:
    """The CUDA devices the correctness probe used (it runs in the pipeline's environment)."""
    if not env:
        return []
    probe = _optional_json(root, "correctness.json")
    uses = [("plan.json probe.devices", _opt(plan, "probe", "devices")),
            ("correctness.json devices", probe.get("devices"))]
    return gpu_use_problems("correctness probe", uses, env)


def _gpu_use(r: RunRecords, env: dict) -> list[str]:
    """The CUDA devices the run's records state, against the GPUs environment.json lists."""
    exported = r.run.get("env_set") if isinstance(r.run.get("env_set"), dict) else {}
    # the run's own CUDA_VISIBLE_DEVICES (run.json env_set, compared with the plan's elsewhere)
    visible = exported.get("CUDA_VISIBLE_DEVICES", r.config.get("cuda_visible_devices"))
    uses = [("plan.json devices", r.config.get("devices")), ("run.json command --devices", r.args.devices),
            ("train_meta.json devices", r.meta.get("devices"))]
    return gpu_use_problems(r.name, uses, env, visible)


def _check_model_record(root: Path, model: dict, plan: dict, env: dict, result: Verification) -> None:
    """model.json against the hashed model, the plan and environment.json (what cannot be
    derived here, for want of its MuJoCo, is said where the verdict is read)."""
    result.records += model_problems(root, model, env) + name_problems(model, plan) + cost_problems(model)
    problems, not_derived = summary_findings(root, model)
    result.records += problems
    result.covered += not_derived


def _check_environment(root: Path, env: dict, result: Verification, strict: bool, made_here: bool) -> None:
    """environment.json against itself, the correctness probe's record and the stored diff
    (`made_here`: a set made by this code, whose records hold every field it writes)."""
    if not env:
        return
    probe = _optional_json(root, "correctness.json") if (root / "correctness.json").is_file() else None
    _agree(result, "set", set_facts(env, probe), strict)
    result.records += gpu_problems(env) + dirty_problems(env) + dirty_without_diff_problems(root, env)
    result.records += listed_name_problems(env) + listed_change_problems(root, env)
    for problems, notes in (git_record_findings(env, made_here), cpu_findings(env, made_here),
                            environment_text_findings(env, made_here),
                            diff_findings(root, env, made_here),
                            diff_apply_findings(root, env)):
        result.records += problems
        result.notes += notes


def _check_set_name(root: Path, plan: dict, result: Verification) -> None:
    """The set is the one its records name: another set's evidence copied (or renamed) under
    this folder's name, with its paths edited to match, hashed and passed as this set."""
    recorded = plan.get("run_set")
    if isinstance(recorded, str) and recorded != root.name:
        result.records.append(f"plan.json: the set is recorded as {recorded!r}, its folder is {root.name!r}: another "
                              "set's evidence copied or renamed (its report and records speak of that set)")


def _model_hash(root: Path, plan: dict, result: Verification) -> str | None:
    """The set's model hash, checked against the model file and the plan's pin."""
    if not (root / "model.json").is_file():
        return None
    model = load_json(root, "model.json")
    stored = model.get("sha256")
    path = root / "model" / MODEL_FILE  # the file the manifest hashes, whatever model.json names
    if stored is None:
        result.notes.append(f"model.json: sha256 {OLDER}")
        return None
    if path.is_file() and sha256_file(path) != stored:
        result.records.append(f"model: model.json sha256 {stored[:12]}..., model/{path.name} hashes to "
                              f"{sha256_file(path)[:12]}...")
    pin = (plan.get("model") or {}).get("expect_sha256")
    if pin and pin != stored:
        result.records.append(f"model: plan.json pins {pin[:12]}..., model.json records {stored[:12]}...")
    return stored
