"""`resolve`: the config and the presets turned into the checked `Plan`, step by step in
the order the config's keys are checked (the first problem is the one reported)."""

from __future__ import annotations

import os

from sacscale.number_kinds import is_number
from sacscale.checks import MAX_SEED
from sacscale.eval.limits import fps_problem, video_length_problem, video_size_problem
from sacscale.parallel.matrix import preset_from_matrix
from sacscale.parallel.probe_settings import ProbeSettings, size_problem
from sacscale.parallel.topology import TopologyError
from sacscale.pipeline.code_folders import code_path_problem
from sacscale.pipeline.interpreter_check import interpreter_problem
from sacscale.pipeline.command_size import check_run_commands
from sacscale.pipeline.config_check import ConfigError, check_values
from sacscale.pipeline.evaluation_size import resolve_evaluation
from sacscale.pipeline.learner_updates import check_learner_updates
from sacscale.pipeline.model_source import resolve_model
from sacscale.pipeline.plan_model import SCHEDULES, Host, Plan, Run, repeat_order
from sacscale.pipeline.plan_values import (
    DEVICES,
    MAX_ITERATIONS,
    MAX_ORDER,
    MAX_REPEATS,
    MAX_RUNS,
    NAME,
    PROBE_FEWEST_ITERATIONS,
    RUN_FIELDS,
    PlanError,
    config_key,
    merged_value,
    positive_int,
    run_field_key,
    seconds,
    shown,
    shown_path,
)
from sacscale.pipeline.probe_ranks import check_probe_ranks
from sacscale.pipeline.preset_choice import NAMED, asked_once, choose_preset
from sacscale.pipeline.run_commands import work_folder
from sacscale.pipeline.run_config import check_cpu_ranks, check_matrix_learner_cpus, resolve_run_config
from sacscale.pipeline.run_folder_names import record_run_form
from sacscale.pipeline.run_merge import check_layer_extras, merged_fields
from sacscale.pipeline.twin_configs import check_distinct_training
from sacscale.trainers.reference_options import DEFAULT_PYTHON
from sacscale.trainers.unilab import meshes_problem


def resolve(config: dict, presets_doc: dict, host: Host | None = None, check_host: bool = True,
            matrix=None) -> Plan:
    """The checked plan. `host=None` detects the machine; `check_host=False` skips the
    checks that depend on it (CPUs that exist), e.g. when planning on a cluster's login node.
    `matrix`: the `sacscale plan-matrix` output (or a callable giving it, asked only when
    needed) for the preset named by `auto.planned`; None: that preset is not available."""
    try:
        check_values(config)  # before anything is expanded: sizes, finite numbers, plain strings
    except ConfigError as exc:
        raise PlanError(str(exc)) from None
    if host is None:
        host = Host.detect()
    if not check_host:
        _check_planning_for_another_machine(config, presets_doc)
    get_matrix = asked_once(matrix)
    name, reason = choose_preset(config, presets_doc, host, get_matrix,
                                 # auto's candidate, planned without auto's matrix (a named preset's would be
                                 # refused) and with its own probe: a probe too narrow for the candidate that
                                 # fits is refused once it is chosen, not taken for a reason to choose a smaller
                                 lambda candidate: resolve({**config, "preset": candidate, "planner": None,
                                                            "probe": None}, presets_doc, host))
    preset, planned, reason = _preset_and_matrix(config, presets_doc, name, reason, get_matrix)

    prefix, run_set = _names(preset, config, name, check_host)
    repeats, iterations, seed = _sizes_and_seed(preset, config, name)
    entries, defaults = _run_entries(preset, config, name)
    layers = {n: _field_layers(preset, config, name, n) for n in entries}
    order = _order(preset, config, name, entries)
    _check_run_count(preset, config, name, repeats, order)
    cpu_host = host if check_host else None
    run_configs = {n: resolve_run_config(n, entries[n][0], defaults, entries[n][1], cpu_host,
                                         [work_folder(run_set, _run_name(prefix, k, n)) for k in range(1, repeats + 1)],
                                         layers[n])
                   for n in order}
    check_matrix_learner_cpus(planned, order, cpu_host)
    _check_log_points(run_configs, iterations)
    iterations_key = config_key(merged_value(preset, config, "iterations", name)[1], "iterations")
    keys = {n: run_field_key(n, layers[n], origin) for n, (_, origin) in entries.items()}
    check_learner_updates(run_configs, keys, iterations, iterations_key)
    check_distinct_training(run_configs, order, {n: entries[n][1] for n in order}, config.get("run_configs") or {})
    _check_left_out(entries, order, (defaults, layers, keys), (iterations, iterations_key), prefix, run_set,
                    repeats)
    _check_reference(config, run_configs)
    pairs = _pairs(preset, config, name, order, run_configs)
    probe = _probe(preset, config, cpu_host)
    check_probe_ranks(probe, config, name, run_configs, order)
    model = resolve_model(preset, config, check_host)
    schedule = _schedule(preset, config, name)
    evaluation = resolve_evaluation(config, run_configs)
    _check_command_bounds(config)
    _check_video_has_evaluations(config)
    _check_kept_policy_has_evaluations(preset, config, name)
    runs = _runs(prefix, order, repeats, seed, schedule)

    plan = Plan(
        preset=name,
        preset_reason=reason,
        run_set=str(run_set),
        prefix=prefix,
        repeats=repeats,
        iterations=iterations,
        seed=seed,
        order=list(order),
        schedule=schedule,
        execution_order=[r.name for r in runs],
        run_configs=run_configs,
        runs=runs,
        pairs=pairs,
        probe=probe,
        model_timeout_s=seconds(merged_value(preset, config, "model_timeout_s", name)[0], "model_timeout_s", 1800),
        matrix=planned,
        model=model,
        description=preset_description(preset),
        evaluation=evaluation,
    )
    check_run_commands(plan, {n: entries[n][1] for n in order}, reference=config.get("reference"))
    return plan


def preset_description(preset: dict) -> str:
    """plan.json's `description`: the preset's, as workflow/presets.yaml gives it."""
    return str(preset.get("description", "")).strip()


def _check_planning_for_another_machine(config: dict, presets_doc: dict) -> None:
    """Planning for another machine (a cluster's login node for its GPU node): a choice
    made from this machine's GPUs or topology would be the wrong machine's."""
    presets = presets_doc.get("presets", {})
    chosen = config.get("preset") or "auto"
    if chosen == "auto":
        raise PlanError("preset: auto chooses from the GPUs of the machine that plans; with host_checks: false "
                        "(planning for another machine, e.g. with profiles/slurm) name the preset: "
                        "--config preset=NAME (known: " + ", ".join(sorted(presets)) + ")")
    if chosen == presets_doc.get("auto", {}).get("planned") and not (config.get("planner") or {}).get("matrix"):
        raise PlanError(f"preset: {chosen} plans from the topology of the machine that plans; with host_checks: "
                        "false give the target machine's recorded matrix: planner: {matrix: FILE} "
                        "(`sacscale plan-matrix --output FILE` on that machine)")


def _preset_and_matrix(config: dict, presets_doc: dict, name: str, reason: str, get_matrix):
    """(the preset, the planned matrix or None, the reason): the preset named by
    `auto.planned` takes its run configurations from the matrix."""
    preset = presets_doc.get("presets", {})[name]
    if name != presets_doc.get("auto", {}).get("planned"):
        return preset, None, reason
    if get_matrix is None:
        raise PlanError(f"preset: {name} takes its run configurations from `sacscale plan-matrix`; none was given")
    planned = get_matrix()
    try:
        preset = preset_from_matrix(preset, planned, name, config.get("order"))
    except TopologyError as exc:
        raise PlanError(str(exc)) from None
    if reason == NAMED:
        reason += f"; the matrix planned from the topology: {planned.get('reason', '')}"
    return preset, planned, reason


def _names(preset: dict, config: dict, name: str, check_host: bool) -> tuple[str, str]:
    """(prefix of the run names, the run set's name), both valid folder names."""
    prefix, origin = merged_value(preset, config, "prefix", name)
    if not isinstance(prefix, str) or not NAME.fullmatch(prefix):
        raise PlanError(f"{config_key(origin, 'prefix')}: {prefix!r} is not a valid name")
    run_set = config.get("run_set") or name
    if not isinstance(run_set, str) or not NAME.fullmatch(run_set):
        raise PlanError(f"run_set: {shown(run_set)} is not a valid name (letters, digits, '_', '.', '-'; "
                        "at most 64)")
    for key, value in ((config_key(origin, "prefix"), prefix), ("run_set", run_set)):
        own = record_run_form(value)
        if own:  # the run set's folders and run names are made of it
            raise PlanError(f"{key}: {value!r}: {own}; a name holding it would pass for one of them: choose another")
    if check_host:
        _check_run_set_folders(run_set)
    return prefix, run_set


def _check_run_set_folders(run_set: str) -> None:
    """results/<run_set> and reports/<run_set> must be folders or absent (e.g. results/README.md
    is a committed file, not a set)."""
    for folder in ("results", "reports"):
        path = os.path.join(folder, run_set)
        if os.path.islink(path):  # the set's evidence would be written, hashed and verified elsewhere
            raise PlanError(f"run_set: {folder}/{run_set} is a symbolic link, and a run set's folder is a folder "
                            "of its own; remove the link or choose another name")
        if os.path.lexists(path) and not os.path.isdir(path):
            raise PlanError(f"run_set: {folder}/{run_set} exists and is not a run set's folder; choose another name")
        twin = _case_twin(folder, run_set)
        if twin:  # a clone on a case-insensitive disk (macOS, Windows) would hold both sets in one folder
            raise PlanError(f"run_set: {run_set!r} and {folder}/{twin} differ only in case (one folder on a "
                            "case-insensitive disk); choose another name")
    _check_report_beside_the_set(run_set)


def _check_report_beside_the_set(run_set: str) -> None:
    """reports/<set> must be the report folder beside the set where it lies: the pipeline
    writes the report there, and verify (evidence.set_root) checks the one beside the set's
    real folder, refusing a set whose page beside its name is another, the page a reader of
    this checkout opens. With results/ a link to another disk and reports/ this folder's own,
    the whole set was built and its own verify job then refused it."""
    real_set = os.path.realpath(os.path.join("results", run_set))
    lies_in = os.path.dirname(real_set)
    if os.path.basename(lies_in) != "results":
        raise PlanError(f"run_set: results/{run_set} lies in {lies_in}, a folder not named results (results/ is a "
                        "link), beside which verify finds no report folder, so the set would fail its own "
                        "verification; link results to a folder named results, with the reports folder beside it")
    beside = os.path.join(os.path.dirname(lies_in), "reports", run_set)
    reports = os.path.dirname(beside)
    if os.path.islink(reports):  # verify's check_tree refuses a report reached through a link
        raise PlanError(f"run_set: results/{run_set} lies in {lies_in}, beside which reports ({reports}) is a "
                        "symbolic link: verify refuses a set whose report is not in the checkout, so the set would "
                        "fail its own verification; make reports a folder of its own there, or link results to a "
                        f"folder named results beside {os.path.realpath(reports)}")
    report = os.path.realpath(os.path.join("reports", run_set))
    if report != os.path.realpath(beside):
        raise PlanError(f"run_set: results/{run_set} lies in {lies_in}, and reports/{run_set} ({report}) is not the "
                        f"report folder beside it ({beside}): the pipeline writes the report to reports/{run_set}, "
                        "and verify checks the one beside the set where it lies, so the set would fail its own "
                        f"verification; make reports a link to {os.path.dirname(beside)}, or keep results and "
                        "reports both in this folder")


def _case_twin(folder: str, name: str) -> str | None:
    """An entry of `folder` that is `name` in other letter case, if any."""
    try:
        entries = os.listdir(folder)
    except OSError:
        return None
    return next((e for e in entries if e != name and e.casefold() == name.casefold()), None)


def _sizes_and_seed(preset: dict, config: dict, name: str) -> tuple[int, int, int]:
    """(repeats, iterations, seed), each within its bounds."""
    values = {}
    for key, top in (("repeats", MAX_REPEATS), ("iterations", MAX_ITERATIONS)):
        value, origin = merged_value(preset, config, key, name)
        values[key] = positive_int(value, config_key(origin, key), maximum=top)
    seed, origin = merged_value(preset, config, "seed", name)
    # repeat k runs seed + k - 1: the last repeat's seed must still be one the trainer takes
    seed = positive_int(seed if seed is not None else 1, config_key(origin, "seed"), 0,
                        MAX_SEED - values["repeats"] + 1)
    return values["repeats"], values["iterations"], seed


def _run_entries(preset: dict, config: dict, name: str) -> tuple[dict[str, tuple[dict, str]], dict]:
    """({configuration: (its entry, where it comes from)}, the merged run_defaults): the
    config's entries merged over the preset's by name, and its run_defaults over the preset's
    (sacscale.pipeline.run_merge: overrides and env key by key)."""
    check_layer_extras(preset, config, name)
    defaults = merged_fields(preset.get("run_defaults") or {}, config.get("run_defaults") or {})
    unknown = sorted(set(defaults) - set(RUN_FIELDS))
    if unknown:
        raise PlanError(f"run_defaults.{unknown[0]}: unknown field (known: {', '.join(RUN_FIELDS)})")
    entries = {n: (dict(e or {}), name) for n, e in (preset.get("run_configs") or {}).items()}
    for n, e in (config.get("run_configs") or {}).items():
        base = entries.get(n, ({}, "config"))[0]
        entries[n] = (merged_fields(base, e or {}), "config")
    return entries, defaults


def _field_layers(preset: dict, config: dict, name: str, n: str) -> list[tuple[dict, str, str]]:
    """Where run configuration `n`'s fields come from, the layer that wins first (run_field_key)."""
    return [(((config.get("run_configs") or {}).get(n) or {}), f"run_configs.{n}", "config"),
            (((preset.get("run_configs") or {}).get(n) or {}), f"run_configs.{n}", name),
            (config.get("run_defaults") or {}, "run_defaults", "config"),
            (preset.get("run_defaults") or {}, "run_defaults", name)]


def _order(preset: dict, config: dict, name: str, entries: dict) -> list[str]:
    """The configurations of a repeat: listed once each, each one with an entry."""
    order, origin = merged_value(preset, config, "order", name)
    okey = config_key(origin, "order")
    if not order or not isinstance(order, list):
        raise PlanError(f"{okey}: empty; list the run configurations to alternate")
    if len(order) > MAX_ORDER:
        raise PlanError(f"{okey}: {len(order)} run configurations; at most {MAX_ORDER} a repeat")
    seen = set()
    for entry in order:
        if entry not in entries:
            raise PlanError(
                f"{okey}: {entry!r} has no run configuration (run_configs has: {', '.join(sorted(entries)) or 'none'})"
            )
        if entry in seen:
            raise PlanError(f"{okey}: {entry!r} is listed twice")
        # run directories are named after it: on a case-insensitive disk (a clone on macOS or
        # Windows) `n1` and `N1` would be one folder
        twin = next((s for s in seen if s.casefold() == str(entry).casefold()), None)
        if twin is not None:
            raise PlanError(f"{okey}: {entry!r} and {twin!r} differ only in case (their run folders would be one "
                            "on a case-insensitive disk); rename one")
        seen.add(entry)
    return order


def _check_run_count(preset: dict, config: dict, name: str, repeats: int, order: list[str]) -> None:
    """repeats x the configurations of order within MAX_RUNS: each bound alone let 64,000
    runs be planned, and Snakemake then built their DAG for minutes without a word."""
    if repeats * len(order) <= MAX_RUNS:
        return
    keys = [config_key(merged_value(preset, config, key, name)[1], key) for key in ("repeats", "order")]
    raise PlanError(f"{keys[0]} {repeats} x {keys[1]} of {len(order)} run configurations ({_listed(order)}): "
                    f"{repeats * len(order):,} runs; a run set holds at most {MAX_RUNS:,}: plan fewer repeats or "
                    "configurations, or split them into several run sets")


def _listed(names: list[str]) -> str:
    return ", ".join(names) if len(names) <= 4 else f"{', '.join(names[:3])}, ... {names[-1]}"


def left_out_of_order(config: dict, order: list[str]) -> list[str]:
    """The run configurations the user's config gives (new, or fields over a preset's) that
    `order` does not name: checked, but neither run nor compared. The preset's own are not
    counted: a preset keeps controls outside its default order on purpose, for a user to name
    in `order` (workflow/presets.yaml: n2_shared_nosync, n2_pool_lpin, ...)."""
    return [n for n in (config.get("run_configs") or {}) if n not in order]


def _check_left_out(entries: dict, order: list[str], defaults: tuple, iterations: tuple[int, str], prefix: str,
                    run_set, repeats: int) -> None:
    """The user's run configurations left out of `order`, judged as the ordered ones are: one
    that could never run (the reference on a CPU) is named now, not found when a user later
    orders it. The machine's CPUs are not judged (host None): a configuration that does not
    run here may be meant for another machine. The preset's controls are left to be judged
    when ordered (see left_out_of_order). `defaults`: run_defaults,
    each configuration's layers and keys (run_field_key). `iterations`: the plan's, and its config key."""
    defaults, layers, keys = defaults
    left_out = {n: entries[n] for n in entries if n not in order and entries[n][1] == "config"}
    judged = {n: resolve_run_config(n, entry, defaults, origin, None,
                                    [work_folder(run_set, _run_name(prefix, k, n)) for k in range(1, repeats + 1)],
                                    layers[n])
              for n, (entry, origin) in left_out.items()}
    _check_log_points(judged, iterations[0])
    check_learner_updates(judged, keys, *iterations)


# the analysis reads the last half of a run's log points and needs two there
MIN_LOG_POINTS = 3


def _check_reference(config: dict, run_configs: dict) -> None:
    """The reference's own environment where a run trains with the reference: its interpreter,
    started from this folder (by reference-env and train-reference), judged as a run's code
    paths are, and its meshes folder as train-reference judges it at its start, before any
    run starts (a typo would otherwise end the reference run after the runs before it)."""
    if not any(rc.trainer == "unilab" for rc in run_configs.values()):
        return
    reference = config.get("reference") or {}
    python = reference.get("python") if isinstance(reference, dict) else None
    problem = interpreter_problem(str(python or DEFAULT_PYTHON))
    if problem:
        raise PlanError(f"reference.python: {problem}")
    meshes = reference.get("meshes") if isinstance(reference, dict) else None
    if meshes and (problem := meshes_problem(str(meshes))):
        raise PlanError(f"reference.meshes: {shown_path(meshes)}: {problem}; name the folder of the G1's STL files, "
                        "or leave reference.meshes out for the asset package's")
    if meshes and (problem := code_path_problem(str(meshes))):
        raise PlanError(f"reference.meshes: {shown_path(meshes)} {problem}; the reference's scene is made of the "
                        "files in it, so another user could change what the runs train with: name a folder of your own")


def _check_log_points(run_configs: dict, iterations: int) -> None:
    """Every run of our trainer logs often enough for its analysis: a run that logs less
    trains to its end and then gives no figure."""
    for name, rc in run_configs.items():
        if rc.trainer != "sacscale":
            continue
        points = iterations // rc.log_every + (iterations % rc.log_every != 0)
        if points < MIN_LOG_POINTS:
            raise PlanError(f"run_configs.{name}.log_every: {rc.log_every} with iterations {iterations} gives "
                            f"{points} log point(s); the analysis needs at least {MIN_LOG_POINTS} (it reads the "
                            "last half of them): log more often or run longer")


def _pairs(preset: dict, config: dict, name: str, order: list[str], run_configs: dict) -> list[tuple[str, str]]:
    """The (baseline, compared) pairs the report compares, both in the order."""
    pairs_raw, origin = merged_value(preset, config, "pairs", name)
    pairs = []
    for i, pair in enumerate(pairs_raw or []):
        pk = config_key(origin, f"pairs[{i}]")
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise PlanError(f"{pk}: a pair is [baseline, compared], got {pair!r}")
        for c in pair:
            if c not in run_configs:
                raise PlanError(f"{pk}: {c!r} is not in order ({', '.join(order)})")
        if pair[0] == pair[1]:
            raise PlanError(f"{pk}: {pair[0]!r} compared with itself; a pair names two run configurations")
        if (pair[0], pair[1]) in pairs:  # the report would show the comparison twice
            raise PlanError(f"{pk}: [{pair[0]}, {pair[1]}] is listed twice")
        pairs.append((pair[0], pair[1]))
    return pairs


def _check_command_bounds(config: dict) -> None:
    """The video's values held to the bounds of the command that takes them (sacscale
    render-best), which would otherwise refuse them only after every run has trained (the
    evaluation's: sacscale.pipeline.evaluation_size)."""
    video = config.get("video") or {}
    if isinstance(video, dict) and is_number(video.get("fps")):
        problem = fps_problem(video["fps"], name="video.fps")
        if problem:
            raise PlanError(problem)
    if isinstance(video, dict) and is_number(video.get("fps")) and is_number(video.get("seconds")):
        problem = video_length_problem(video["seconds"], video["fps"], "video.seconds", "video.fps")
        if problem:
            raise PlanError(problem)
    size = ("width", "height", "seconds", "fps")  # the schema fills in the defaults of those not given
    if isinstance(video, dict) and all(is_number(video.get(key)) for key in size):
        problem = video_size_problem(*(video[key] for key in size), tuple(f"video.{key}" for key in size))
        if problem:
            raise PlanError(problem)


def _check_video_has_evaluations(config: dict) -> None:
    """The video shows the best-evaluated run's policy: asked for without the evaluations
    it is chosen by, it was planned away without a word."""
    video, evaluation = config.get("video") or {}, config.get("evaluation") or {}
    if isinstance(video, dict) and isinstance(evaluation, dict) and video.get("enabled") is True \
            and evaluation.get("enabled") is False:
        raise PlanError("video.enabled: true needs evaluation.enabled, which is false: the video shows the "
                        "best-evaluated run's policy; enable the evaluation or set video.enabled to false")


def _check_kept_policy_has_evaluations(preset: dict, config: dict, name: str) -> None:
    """keep_policies: best keeps the best-evaluated run's policy: given (by the config or the
    preset) without the evaluations, every policy stayed without a word. Left out, it
    follows the evaluation (best with it, every policy without), as docs/config.md says."""
    value, origin = merged_value(preset, config, "keep_policies", name)
    evaluation = config.get("evaluation") or {}
    if value == "best" and isinstance(evaluation, dict) and evaluation.get("enabled") is False:
        raise PlanError(f"{config_key(origin, 'keep_policies')}: best needs evaluation.enabled, which is false: "
                        "best keeps the best-evaluated run's policy; enable the evaluation, or set keep_policies "
                        "to all (without evaluations every run's policy is kept)")


def _probe(preset: dict, config: dict, host: Host | None = None) -> dict:
    """The probe's settings, merged field by field, defaults filled in and checked (its CPU
    ranks against `host`'s CPUs, when given)."""
    probe = {**(preset.get("probe") or {}), **(config.get("probe") or {})}
    probe.setdefault("devices", "cpu,cpu")
    probe.setdefault("iterations", 3)
    probe.setdefault("compile_loss", False)
    probe.setdefault("timeout_s", 1800)
    probe.setdefault("trainer_iterations", 0)
    if not DEVICES.fullmatch(str(probe["devices"])):
        raise PlanError(f"probe.devices: {shown(probe['devices'])} is not 'cpu,cpu' or '0,1'-style")
    if str(probe["devices"]).startswith("cpu"):
        check_cpu_ranks(len(str(probe["devices"]).split(",")), host, "probe.devices")
    positive_int(probe["iterations"], "probe.iterations", maximum=10**6)
    positive_int(probe["trainer_iterations"], "probe.trainer_iterations", 0, 10**6)
    if 0 < probe["trainer_iterations"] < PROBE_FEWEST_ITERATIONS:
        raise PlanError(f"probe.trainer_iterations: {probe['trainer_iterations']}: the probe's learner first updates "
                        f"in iteration {PROBE_FEWEST_ITERATIONS}, so fewer compare no gradients; give 0 (no trainer "
                        f"probe) or at least {PROBE_FEWEST_ITERATIONS}")
    seconds(probe["timeout_s"], "probe.timeout_s", 1800)
    # its default batch (no option here) over its ranks, by the bound `sacscale probe` judges
    if problem := size_problem(ProbeSettings(str(probe["devices"]).split(",")).resolved()):
        raise PlanError(f"probe.devices: {probe['devices']}: {problem}")
    return probe


def _schedule(preset: dict, config: dict, name: str) -> str:
    schedule, origin = merged_value(preset, config, "schedule", name)
    schedule = schedule or "counterbalanced"
    if schedule not in SCHEDULES:
        raise PlanError(f"{config_key(origin, 'schedule')}: {schedule!r} is not one of {', '.join(SCHEDULES)}")
    return schedule


def _run_name(prefix: str, repeat: int, config: str) -> str:
    return f"{prefix}_r{repeat}_{config}"


def _runs(prefix: str, order: list[str], repeats: int, seed: int, schedule: str) -> list[Run]:
    """The runs in execution order; both configurations of repeat k run with the same seed
    (paired repeats)."""
    runs = []
    for k in range(1, repeats + 1):
        for c in repeat_order(order, k, schedule):
            runs.append(Run(name=_run_name(prefix, k, c), config=c, repeat=k, seed=seed + k - 1, index=len(runs)))
    return runs
