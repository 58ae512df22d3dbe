# Helpers of the pipeline: the resolved plan (preset + config), the run list and paths.
# The logic lives in the package (sacscale.pipeline.runplan); this file only wires it to rules.
import json
import os
import re
import shlex
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import yaml
from snakemake.exceptions import WorkflowError
from snakemake.logging import logger as snakemake_logger
from snakemake.settings.enums import Quietness

from sacscale.finished_sets import PIPELINE_SET
from sacscale.pipeline import runplan
from sacscale.pipeline.set_folders import check_folder_shapes, check_set_folders, file_error_line, open_new_log


# The profile's quiet terminal (`quiet: [..., progress]`): the scheduler's two lines before
# every job ("Select jobs to execute...", "Execute 1 jobs...") are progress as well, and
# are left out with it, so that a job is its message under its start time. Snakemake has
# no setting for them; `--quiet host` (progress not quiet) shows them again.
def _scheduler_progress(record):
    return not re.fullmatch(r"Select jobs to execute\.\.\.|Execute \d+ jobs\.\.\.", str(record.msg))


if Quietness.PROGRESS in (getattr(workflow.output_settings, "quiet", None) or ()):
    snakemake_logger.addFilter(_scheduler_progress)


# why another user's matrix file (or one they may change or swap) is refused, for the message
MATRIX_TAKEN_AS = "its run configurations (num_envs, overrides, devices, pools) are planned as this user's own"


def planned_matrix():
    """The matrix of the planned preset: config planner.matrix (a recorded matrix.json), else
    `sacscale plan-matrix` on this machine. Asked only when that preset is chosen."""
    opts = config.get("planner") or {}
    if opts.get("matrix"):
        from sacscale.pipeline.config_check import ConfigError, read_json

        try:  # bounded: size, depth, duplicate keys, finite numbers; no other user's to change
            return read_json(opts["matrix"], "recorded matrix", taken_as=MATRIX_TAKEN_AS)
        except ConfigError as exc:
            raise runplan.PlanError(f"planner.matrix: {exc}") from None
    cmd = [sys.executable, "-P", "-m", "sacscale.cli", "plan-matrix"]  # -P: the working folder off its sys.path
    cmd += ["--smt"] if opts.get("smt") else []
    cmd += ["--pool-cores", str(opts["pool_cores"])] if opts.get("pool_cores") else []
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["failed"])[-1]
        raise runplan.PlanError(f"planner: {last}")
    try:
        return json.loads(proc.stdout)
    except ValueError as exc:
        raise runplan.PlanError(f"planner: `sacscale plan-matrix` printed no JSON ({exc})") from None


def read_presets():
    """workflow/presets.yaml, parsed by libyaml where PyYAML has it: a tenth of the pure-Python
    parser's time, paid by every Snakemake invocation (the same safe loading)."""
    with open(workflow.source_path("../presets.yaml"), encoding="utf-8") as fh:
        return yaml.load(fh, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def load_plan():
    presets = read_presets()
    try:
        plan = runplan.resolve(
            config,
            presets,
            check_host=config.get("host_checks", True),
            matrix=planned_matrix,
        )
    except runplan.PlanError as exc:
        raise WorkflowError(f"config error: {matrix_source_named(str(exc), presets)}") from None
    return plan


def matrix_source_named(message, presets):
    """The message naming config planner.matrix where a value it speaks of came from it."""
    matrix_file = (config.get("planner") or {}).get("matrix")
    planned = (presets.get("auto") or {}).get("planned")
    if not matrix_file or not planned:
        return message
    from sacscale.pipeline.plan_values import matrix_named

    return matrix_named(message, planned, matrix_file)


PLAN = load_plan()
print(
    f"sacscale: preset {PLAN.preset} ({PLAN.preset_reason}); run set {PLAN.run_set}: "
    f"{len(PLAN.runs)} runs of {', '.join(PLAN.order)}",
    file=sys.stderr,
)
# what the plan takes but does not do as a reader may think (configurations left out of
# order, an unused matrix, a narrower probe): said once
for note in runplan.plan_notes(config, PLAN):
    print(f"sacscale: note: {note}", file=sys.stderr)

# Serial GPU work: every rule that may overlap a training run takes this lock.
if "gpu_lock" not in workflow.global_resources:
    workflow.register_resource("gpu_lock", 1)

# profiles/slurm: the rules that need the GPU node (the Snakefile's localrules: all others
# stay on the submitting host) run as SLURM jobs on the one node named by slurm_node, alone
# there, so verify_env records the runs' node and nothing shares it while a run is measured.
if "slurm_node" in config and not config["slurm_node"]:
    raise WorkflowError(
        "config error: slurm_node: name the GPU node that every GPU job runs on: "
        "--config slurm_node=NAME (profiles/slurm/config.slurm.yaml sets it to null)"
    )
GPU_NODE = f"--nodelist={config['slurm_node']} --exclusive" if config.get("slurm_node") else ""

RESULTS = f"results/{PLAN.run_set}"
REPORTS = f"reports/{PLAN.run_set}"
LOGS = f"logs/{PLAN.run_set}"
BENCH = f"benchmarks/{PLAN.run_set}"
# The set's folders, judged before the first job: Snakemake writes outputs and benchmarks there by
# path, and every rule's `> {LOGS}/X.log` redirection follows a link planted at the log's
# name; only a folder of ours, closed to others, keeps them ours (sacscale.pipeline.set_folders).
# Anything but a folder where the rules make one, or a folder at a file's name they write (from
# the rules' own f"{LOGS}/...", f"{BENCH}/...", f"{REPORTS}/..." and results("...") paths, a
# {run} wildcard as each planned run's name), is refused before anything is made. They are
# made only once the set may be written (at the end of this file), and never by a dry run.
try:
    check_folder_shapes(
        [RESULTS, REPORTS, LOGS, BENCH],
        sorted(str(rules) for rules in Path(workflow.basedir, "workflow", "rules").glob("*.smk")),
        {"LOGS": LOGS, "BENCH": BENCH, "RESULTS": RESULTS, "REPORTS": REPORTS},
        PLAN.run_set,
        [r.name for r in PLAN.runs],
    )
    check_set_folders([RESULTS, REPORTS, LOGS, BENCH], PLAN.run_set, make=False)
except runplan.PlanError as exc:
    raise WorkflowError(f"config error: {exc}") from None
# names this invocation's verify benchmark (workflow/rules/verify.smk)
VERIFY_STAMP = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S.%fZ")
RUN_NAMES = [r.name for r in PLAN.runs]
DEVIATIONS = "docs/deviations.md"

# Marks this workflow's jobs (each inherits it, a SLURM job's Snakemake sets it again): only
# their commands write into the planned, unfinished set (sacscale.commands._finished_sets)
os.environ[PIPELINE_SET] = PLAN.run_set


wildcard_constraints:
    run="|".join(re.escape(r) for r in RUN_NAMES),


def results(path):
    return f"{RESULTS}/{path}"


def run_dir(run):
    return results(f"runs/{run}")


def run_json(run):
    return results(f"runs/{run}/run.json")


def metrics_json(run):
    return results(f"metrics/{run}.json")


def all_run_json():
    return [run_json(r) for r in RUN_NAMES]


def all_metrics():
    return [metrics_json(r) for r in RUN_NAMES]


def eval_json(run):
    return results(f"eval/{run}.json")


def all_evals():
    """Every run's evaluation, when evaluation is on as plan.json records it (runs of ours:
    the reference trainer's policies are not in our checkpoint format)."""
    if not PLAN.evaluation["enabled"]:
        return []
    return [eval_json(r) for r in RUN_NAMES if r not in REFERENCE_RUNS]


def video_outputs():
    """The best run's video and the record of its choice, when the report shows one:
    video.enabled, or (null) where the runs train on GPUs; never without evaluations."""
    enabled = config.get("video", {}).get("enabled")
    if enabled is None:
        enabled = any(rc.device_kind == "cuda" for rc in PLAN.run_configs.values())
    if not enabled or not all_evals():
        return []
    return [f"{REPORTS}/figures/best_run.webp", f"{REPORTS}/figures/best_run.json"]


# The report's video fits this (an animated WebP, re-encoded until it does): a set is 4 MB.
VIDEO_MAX_BYTES = 500_000


def keep_policies():
    """'all' (a learning set: every run's policy is a result) or 'best' (only the report's
    best run's): config keep_policies, else the preset's, else best."""
    value = config.get("keep_policies")
    if value is None:
        value = (read_presets()["presets"].get(PLAN.preset) or {}).get("keep_policies")
    return value or "best"


def scope_args(wildcards, input):
    """sacscale manifest's flags: the set of the current evidence format, holding the
    policies a claim rests on; every other run's policy moves to logs/<set>/left_out,
    its hash recorded in evidence.json (without evaluations, every policy stays)."""
    left_out = f"--left-out-dir {LOGS}/left_out"
    if keep_policies() == "all":
        return f"--scope --keep-policies {shlex.join(RUN_NAMES)} {left_out}"
    if not input.evals:
        return "--scope"
    return f"--scope --keep-best {shlex.join(input.evals)} {left_out}"


def video_args(wildcards, input):
    """sacscale report's flags for the video (none without one)."""
    return f"--video {input.video[0]} --video-record {input.video[1]}" if input.video else ""


# Runs of the reference trainer (trainer: unilab): they need its environment, recorded.
REFERENCE_RUNS = [r.name for r in PLAN.runs if PLAN.run_configs[r.config].trainer == "unilab"]


def reference_record():
    return results("reference_env.json")


def reference_input(wildcards):
    return [reference_record()] if wildcards.run in REFERENCE_RUNS else []


def eval_args():
    """sacscale evaluate's protocol flags: the plan's evaluation (planning resolved the
    config's or the default by where the runs train: sacscale.pipeline.evaluation_size)."""
    from sacscale.pipeline.evaluation_size import evaluate_flags

    return evaluate_flags(PLAN.evaluation)


def figure_paths():
    from sacscale.report.figure_names import FIGURES

    return {name: f"{REPORTS}/figures/{fname}" for name, fname in FIGURES.items()}


def all_outputs():
    return [
        results("plan.json"),
        results("environment.json"),
        results("source.diff"),
        results("model.json"),
        results("correctness.json"),
        *all_run_json(),
        *all_metrics(),
        *all_evals(),
        *([reference_record()] if REFERENCE_RUNS else []),
        results("summary.csv"),
        results("summary.json"),
        results("MANIFEST.sha256"),
        results("manifest.json"),
        results("verify.json"),
        f"{REPORTS}/report.md",
        f"{REPORTS}/report.html",
        *figure_paths().values(),
    ]


def run_set_mode():
    """'write' or 'read-only' (sacscale.evidence.runset): a complete or committed run set
    is never written, and a set made with another plan is refused, before any job."""
    from sacscale.evidence import runset

    asked = runset.requested(sys.argv[1:])
    if asked["job"]:
        return "write"  # a job started by the main process, which has already decided
    state = runset.inspect(PLAN.run_set, Path.cwd(), PLAN.as_dict(), all_outputs())
    try:
        mode = runset.decide(state, asked["targets"], asked["forcing"], asked["report"])
    except runset.RunSetError as exc:
        raise WorkflowError(str(exc)) from None
    if mode == "read-only":
        print(
            f"sacscale: run set {PLAN.run_set} is read-only ({'committed' if state.committed else 'complete'}); "
            "nothing to build. `snakemake verify` checks it; a new run needs a new run_set name.",
            file=sys.stderr,
        )
    return mode


def final_inputs():
    """The inputs of the target `all`: everything, or, for a read-only set, only files that exist and
    that no rule makes (so nothing is planned)."""
    return [ancient(results("plan.json"))] if READ_ONLY else all_outputs()


def write_plan(path, plan, log):
    # This runs in Snakemake's own process: an error of the file system is one line naming
    # the file (a WorkflowError), not a traceback through sacscale.
    from sacscale.atomic import write_json

    try:
        write_json(path, plan)
    except OSError as exc:
        raise WorkflowError(plan_not_written(plan, exc, path)) from None
    try:
        with open_new_log(log) as fh:  # a link put at its name is removed, never written through
            print(f"preset {plan['preset']}: {plan['preset_reason']}; {len(plan['runs'])} runs", file=fh)
    except OSError as exc:
        raise WorkflowError(plan_not_written(plan, exc, log)) from None


def plan_not_written(plan, exc, path):
    return (
        f"plan of run set {plan['run_set']} not written: {file_error_line(exc, path)}; "
        "fix that file or folder (or make room) and run again"
    )


def previous_run(wildcards):
    """The run before this one in the execution order: runs happen strictly in sequence."""
    prev = PLAN.previous(wildcards.run)
    return [run_json(prev.name)] if prev else []


def model_file():
    return results("model/g1_walk_flat.mjb")


def train_args(wildcards):
    """Everything after `--` for the run wrapper, shell-quoted."""
    run = PLAN.run(wildcards.run)
    cmd = runplan.train_command(PLAN, run, runplan.work_folder(PLAN.run_set, run.name), model_file())
    return shlex.join(cmd)


def run_env_args(wildcards):
    # the package's, as planning's bound on the command counts them
    env = runplan.rule_environment(PLAN, PLAN.run(wildcards.run), config.get("reference"))
    return runplan.env_arguments(env)


def run_resolved(wildcards):
    return json.dumps(runplan.resolved_run(PLAN, PLAN.run(wildcards.run)), sort_keys=True)


def run_description(wildcards):
    """For the rule's message: '1 CPU rank, 24 iterations, run 1 of 4'."""
    return runplan.describe_run(PLAN, PLAN.run(wildcards.run))


def run_timeout(wildcards):
    return PLAN.run_configs[PLAN.run(wildcards.run).config].timeout_s


def model_source():
    """The compiled model to start from, when the config names one (an input, so a new
    file rebuilds the model)."""
    return [PLAN.model["from_mjb"]] if PLAN.model.get("from_mjb") else []


def model_args():
    args = []
    if PLAN.model.get("from_mjb"):
        args += ["--from-mjb", PLAN.model["from_mjb"]]
    if PLAN.model.get("expect_sha256"):
        args += ["--expect-sha256", PLAN.model["expect_sha256"]]
    return shlex.join(args)


def probe_args():
    p = PLAN.probe
    args = ["--devices", str(p["devices"]), "--iterations", str(p["iterations"])]
    if p.get("compile_loss"):
        args.append("--compile-loss")
    if p.get("trainer_iterations"):
        args += ["--trainer-iterations", str(p["trainer_iterations"])]
        if PLAN.model.get("from_mjb"):
            args += ["--model", PLAN.model["from_mjb"]]
    return shlex.join(args)


def pair_args():
    return " ".join(f"--pair {a}:{b}" for a, b in PLAN.pairs)


def summary_meta():
    return json.dumps(
        {
            "run_set": PLAN.run_set,
            "preset": PLAN.preset,
            "preset_reason": PLAN.preset_reason,
            "repeats": PLAN.repeats,
            "iterations": PLAN.iterations,
            "order": PLAN.order,
            "schedule": PLAN.schedule,
            "execution_order": PLAN.execution_order,
        },
        sort_keys=True,
    )


def deviations_input():
    return [DEVIATIONS] if Path(DEVIATIONS).is_file() else []


def where_things_are():
    """What a finished invocation prints: where the report, the evidence and its check
    are, and how to build the audit zip."""
    lines = [f"sacscale: run set {PLAN.run_set}"]
    for what, path in (
        ("report", f"{REPORTS}/report.html"),
        ("report (Markdown)", f"{REPORTS}/report.md"),
        ("evidence manifest", results("MANIFEST.sha256")),
    ):
        if Path(path).is_file():
            lines.append(f"  {what}: {path}")
    verify = Path(results("verify.json"))
    if verify.is_file():
        try:
            verdict = "passed" if json.loads(verify.read_text()).get("ok") else "FAILED"
        except (OSError, ValueError, RecursionError, AttributeError):  # a damaged record is named, not raised
            verdict = "unreadable"
        lines.append(f"  verification: {verify} ({verdict}; `snakemake verify` checks again)")
    from sacscale.evidence.scope import size_line  # here: the evidence package is not needed to plan

    size = size_line(Path(results(".")))
    if size:
        lines.append(f"  {size}")
    same = " (with this invocation's config options)" if {"--config", "--configfile"} & set(sys.argv) else ""
    # Snakemake writes the zip itself, after the manifest: verify does not read it (a note says so)
    lines.append(
        f"  audit zip (report, figures, tables, evidence; Snakemake's copy, not checked by verify): "
        f"snakemake --report {REPORTS}/audit.zip{same}"
    )
    return "\n".join(lines)


MODE = run_set_mode()
READ_ONLY = MODE == "read-only"


# The set's folders, made (ours, closed to others) once the decision above let the set be
# written or verified, and only when jobs are about to run: Snakemake calls onstart for an
# execution only, so a refused invocation, a dry run, --lint, --list-rules, --summary or
# --unlock makes nothing (the folders were judged above, without making them).
onstart:
    try:
        check_set_folders([RESULTS, REPORTS, LOGS, BENCH], PLAN.run_set)
    except runplan.PlanError as exc:
        raise WorkflowError(f"config error: {exc}") from None
