"""Assemble the run set's report (Markdown + HTML + figures) from the pipeline's JSON."""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import quote

from sacscale.analysis.record_shapes import (
    METRICS_SHAPE, SUMMARY_SHAPE, summary_consistency_problem, summary_reference_problem,
)
from sacscale.analysis.learning import curves_by_config, tracking_baselines
from sacscale.analysis.metrics import DEFINITIONS
from sacscale.atomic import atomic_write_text
from sacscale.parallel.probe_settings import COMPARISON_FIELDS, PROBE_RECORD_FIELDS
from sacscale.parallel.topology import recorded_variable
from sacscale.reading import loads_record, read_limited
from sacscale.shapes import NUMBER, Maybe, record_problem
from sacscale.report import plots, tables
from sacscale.report.names import NUMBERS_NAME, TITLE_OPENING
from sacscale.report.numbers import report_numbers
from sacscale.report.run_checks import run_checks_line
from sacscale.report.tables import reproduces_seed
from sacscale.report.code_line import commit_line
from sacscale.report.document import (
    Bullets, Code, Document, Heading, Image, Paragraph, Table, to_html, to_markdown,
)
from sacscale.report.text import block_line, code, plain
from sacscale.report.verdict import at_a_glance, verdict_section
from sacscale.report.page_format import PAGE_FORMAT
from sacscale.report.record_error import RecordError
from sacscale.task.model_record import MODEL_RECORD_FIELDS

SEED_TABLE = Table(
    header=["configuration (3 runs each)", "1-GPU steps/s", "2-GPU steps/s", "ratio"],
    rows=[
        ["in-graph grad sync + SHM, automatic CPU config", "30,766", "52,750", "1.715x"],
        ["64 sim cores in all: one pool of 64 / two pools of 32", "45,510", "108,646", "2.387x"],
        ["local pools: one pool of 32 / two pools of 32 each", "50,194", "108,646", "2.165x"],
    ],
    align=["l", "r", "r", "r"],
    caption="The seed's figures (2x RTX 5090, 2048 envs and batch 8192 per rank), same main definition.",
)
LIMITATIONS = [
    "Weak scaling: each rank brings its own environments, batch and CPU simulation pool, so the global "
    "environment count and batch grow with the ranks. A ratio measures CPU quota, collectors and GPUs "
    "scaling together, not the gradient-sync patch in isolation nor pure GPU scaling efficiency.",
    "Short runs say nothing about convergence: the learning curves show that the runs learn and how "
    "configurations compare per env step early in training, not where training ends.",
    "The first 50% of each run's throughput events is discarded (compile, graph capture, replay warm-up); "
    "runs with few logged points give a coarse window.",
    "Repeats are few: the 95% confidence interval is a paired bootstrap over them (its method is named "
    "under the interval table), itself uncertain over very few repeats; read it next to the per-repeat ratios "
    "and the extreme range.",
    "Env steps are control steps (one policy action of one environment), not physics substeps.",
]


# what verify reads of the page's words (sacscale.evidence.report_page)
ATTEMPTS_INTRO = "Failed or stopped attempts (kept under logs/, not evidence; each was rerun): "
DEVIATIONS_TITLE = "Deviations from the reference system"


def _record(path, shape: dict | None = None):
    """A record read bounded and strictly (a sparse file of GBs was read whole; a key given
    twice passed; an integer of thousands of digits was a ValueError naming no file): a JSON
    object of `shape` (one of another shape ended in a KeyError or TypeError that named no
    file, or went into the page as written)."""
    try:
        value = loads_record(read_limited(path).decode("utf-8"))
    except (ValueError, RecursionError) as exc:  # TooLarge, JSONDecodeError, UnicodeDecodeError
        raise RecordError(f"{path}: not a record this pipeline wrote ({exc})") from None
    problem = record_problem(value, shape or {})
    if problem:
        raise RecordError(f"{path}: not a record this pipeline wrote ({problem})")
    return value


# every field the report reads of an evaluation: what `sacscale evaluate` always writes is
# required (named with its file when missing); normalised_tracking, which older records
# lack, and a figure's values (null where no sample was counted) are shown as n/a
_FIGURES = Maybe({str: Maybe(NUMBER)})
_TRACKED = {"normalised_tracking": _FIGURES, "rms_error": {str: Maybe(NUMBER)}, "fall_rate": NUMBER}
_PROTOCOL = {"envs_per_command": int, "commands": (list, dict), "seconds": NUMBER, "settle_s": NUMBER}
EVALUATION_SHAPE = {"overall": _TRACKED, "protocol": _PROTOCOL, "env_steps": Maybe(NUMBER),
                    "ratio_to_stand_still": {str: Maybe(NUMBER)},
                    "baseline_stand_still": Maybe({"overall": Maybe({"normalised_tracking": _FIGURES})}),
                    "per_command": Maybe({str: {**_TRACKED, "ratio_to_stand_still": _FIGURES}})}
# what choosing the best run reads of an evaluation (render-best, manifest --keep-best): its scores
SCORED_EVALUATION_SHAPE = {"overall": {"normalised_tracking": _FIGURES, "rms_error": _FIGURES, "fall_rate": NUMBER},
                           "protocol": Maybe(dict)}
# a verdict read as true: `"pass": "no"` showed PASS
PROBE_SHAPE = {"pass": bool, "world_size": Maybe(int), "comparisons": Maybe(list)}
_GPUS = Maybe([{"name": str, "memory_mib": Maybe(NUMBER)}])
ENVIRONMENT_SHAPE = {key: Maybe(dict) for key in ("versions", "python", "env", "learner", "plan")} | {
    "torch": Maybe({"gpus": _GPUS}), "nvidia": Maybe({"gpus": Maybe([dict]), "topo": Maybe(str)}),
    "project": Maybe({"diff": Maybe({"untracked_not_stored": Maybe(list)})}), "cpu": Maybe({"layout": Maybe(str)})}
VIDEO_SHAPE = {"run": str, "rule": str, "score": NUMBER, "fall_rate": NUMBER}


def _load(path, shape: dict | None = None) -> dict | None:
    if not path:
        return None
    p = Path(path)
    return _record(p, shape) if p.is_file() else None


def _fmt_scalar(v) -> str:
    if isinstance(v, float):
        return f"{v:,.6g}"
    return str(v)


def _count(v) -> str:
    """A recorded count as a number (`1,234`), or as escaped text when the record holds
    something else (a string with markup went into the page as HTML)."""
    return f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else plain(v)


def _fmt_int(v) -> str:
    return f"{v:,}" if isinstance(v, int) else str(v)


def _lines(text: str | None, limit: int = 60) -> str:
    """A recorded tool output as a code block's lines: each line as any other outside text
    (no control, bidi or invisible character: an escape sequence in a recorded `lscpu`
    retitled and cleared the terminal of whoever read report.md)."""
    lines = [block_line(line) for line in (text or "").rstrip("\n").splitlines()]
    if len(lines) > limit:
        lines = lines[:limit] + [f"... ({len(lines) - limit} more lines in environment.json)"]
    return "\n".join(lines)


def environment_section(env: dict | None) -> list:
    if not env:
        return [Paragraph("No environment record was given.")]
    t, v = env.get("torch", {}), env.get("versions", {})
    commit = commit_line(env.get("project") or {})
    gpus = t.get("gpus") or []
    drivers = sorted({g.get("driver") for g in env.get("nvidia", {}).get("gpus", []) if g.get("driver")})
    learner = env.get("learner", {})
    cpu = env.get("cpu", {})
    items = [
        f"project commit: {commit}",
        f"Python {plain(env.get('python', {}).get('version'))}, torch {plain(v.get('torch'))}, "
        f"CUDA {plain(t.get('cuda'))}, cuDNN {plain(t.get('cudnn'))}, NCCL {plain(t.get('nccl'))}, "
        f"MuJoCo {plain(v.get('mujoco'))}, Snakemake {plain(v.get('snakemake'))}",
        "GPUs: " + (", ".join(f"{plain(g['name'])} ({plain(_fmt_int(g['memory_mib']))} MiB)" for g in gpus)
                    or "none visible")
        + (f"; driver {', '.join(plain(d) for d in drivers)}" if drivers else ""),
        f"CPU: {plain(cpu.get('model'))}; {plain(cpu.get('available_count'))} CPUs available "
        f"({plain(cpu.get('available'))})",
        "NCCL_* / CUDA_VISIBLE_DEVICES: "
        + (", ".join(code(f"{k}={val}") for k, val in env.get("env", {}).items() if recorded_variable(k))
           or "none set"),
        f"learner module imported: {code(learner.get('file') or learner.get('error'))}; graph hooks: "
        f"{str(bool(learner.get('graph_hooks'))).lower()}",
    ]
    blocks = [Bullets(items)]
    topo = env.get("nvidia", {}).get("topo")
    if topo:
        blocks += [Paragraph("`nvidia-smi topo -m`:"), Code(_lines(topo))]
    if env.get("cpu", {}).get("layout"):
        blocks += [Paragraph("`lscpu -e=CPU,CORE,SOCKET,NODE`:"), Code(_lines(env["cpu"]["layout"]))]
    return blocks


def probe_section(probe: dict | None) -> list:
    if not probe:
        return [Paragraph("No correctness probe result was given.")]
    verdict = "PASS" if probe.get("pass") else "FAIL"
    blocks = [Paragraph(f"Verdict: {verdict} (`pass: {str(bool(probe.get('pass'))).lower()}`). Training "
                        "runs only after a pass.")]
    items = []
    for key, value in probe.items():
        if key in ("pass", "comparisons") or key not in PROBE_RECORD_FIELDS:  # a key the probe never writes
            continue
        if isinstance(value, (int, float, str, bool)) or value is None:
            items.append(f"{plain(key)}: {plain(_fmt_scalar(value))}")
        elif isinstance(value, (dict, list)) and len(json.dumps(value)) <= 200:
            items.append(f"{plain(key)}: {code(json.dumps(value))}")
    if items:
        blocks.append(Bullets(items))
    rows = [c for c in probe.get("comparisons") or [] if isinstance(c, dict)]
    if rows:
        header = list(dict.fromkeys(k for c in rows for k in c if k in COMPARISON_FIELDS))
        blocks.append(Table(header=[plain(k) for k in header],
                            rows=[[plain(_fmt_scalar(c.get(k, ""))) for k in header] for c in rows],
                            caption="per-tensor agreement of the data-parallel ranks with the single-rank reference"))
    return blocks


def model_section(model: dict | None) -> list:
    if not model:
        return [Paragraph("No model record was given.")]
    scalars = {k: v for k, v in model.items() if isinstance(v, (int, float, str, bool)) and k in MODEL_RECORD_FIELDS}
    return [Bullets([f"{plain(k)}: {plain(_fmt_scalar(v))}" for k, v in scalars.items()] or ["(no scalar fields)"])]


def evidence_section(verification: dict | None, manifest: dict | None) -> list:
    items = []
    if manifest:
        items.append(f"`MANIFEST.sha256`: {_count(manifest.get('files'))} files, {_count(manifest.get('bytes'))} bytes "
                     "(check without this package: `cd results/<run set> && sha256sum -c MANIFEST.sha256`)")
    if verification:
        state = ("all files match and everything derived recomputes (metrics, records, summary)"
                 if verification.get("ok") else "FAILED")
        items.append(f"verification: {state} ({_count(verification.get('files_checked'))} files, "
                     f"{_count(verification.get('runs_checked'))} runs)")
    return [Bullets(items)] if items else [Paragraph("No evidence manifest was given.")]


def window_blocks(summary: dict, metrics: list[dict]) -> list:
    blocks = [tables.window_table(metrics, summary.get("short_window_s", 30.0))]
    short = summary.get("short_windows") or []
    if short:
        blocks.append(Paragraph(
            f"Warning: {len(short)} run(s) measured over less than {summary.get('short_window_s', 30.0):g} s "
            f"({', '.join(code(r) for r in short)}): too short a window for a stable rate; run more iterations."))
    return blocks


def run_list_section(summary: dict, metrics: list[dict], attempts: list[str] | None) -> list:
    """Every planned run is accounted for: run, missing, or failed before a retry (MLPerf-style:
    nothing is dropped silently)."""
    meta = summary.get("meta") or {}
    planned = meta.get("execution_order") or []
    have = {m["run"] for m in metrics}
    blocks = []
    if planned:
        schedule = meta.get("schedule", "alternating")
        by_repeat: dict[str, list[str]] = {}
        for m in metrics:
            by_repeat.setdefault(plain(m.get("repeat")), []).append(plain(m.get("config")))
        order = "; ".join(f"r{k}: {', '.join(v)}" for k, v in by_repeat.items())
        blocks.append(Paragraph(f"Execution order ({plain(schedule)} schedule; both configurations of a repeat use the "
                                f"same seed): {order}."))
        missing = [r for r in planned if r not in have]
        blocks.append(Paragraph(f"Runs planned: {len(planned)}; with evidence: {len(planned) - len(missing)}"
                                + (f"; missing: {', '.join(code(r) for r in missing)}" if missing else "") + "."))
    if attempts:
        blocks.append(Paragraph(ATTEMPTS_INTRO + ", ".join(code(a) for a in attempts) + "."))
    return blocks


FIGURE_CAPTIONS = {
    "throughput_by_repeat": "Steady env steps/s of every run, by repeat (repeats with the same number ran back to "
                            "back); the values are in the configuration table.",
    "scaling_bars": "Mean steady env steps/s per configuration; bars: std; dots: repeats; labels: ratio of means "
                    "(with its interval in the verdict). With three or more GPU counts, the scaling curve beside "
                    "it: speed-up over the one-GPU baseline and per-rank efficiency against the number of GPUs, "
                    "with the 95% confidence intervals of the paired bootstrap (the interval table).",
    "cumulative_steps": "Cumulative env steps of all ranks against wall time (rank 0 events); the steady rate is "
                        "the slope over the last half of each line's points.",
    "return_vs_time": ("Episode return (rank 0, mean over the episodes ended in each logging interval) against "
                       "wall time; a marker for every logged point. A sanity check that runs learn, not a "
                       "convergence result."),
    "phase_times": ("Per-phase time per iteration from the `Time/*` tags of traced runs, per rank (tail mean, "
                    "then mean over repeats). The collector, the learner and the simulation pool run concurrently: "
                    "each has its own bar, side by side; only the phases within one bar add up."),
    "learning_curves": ("Learning against cumulative env steps of all ranks (rank 0 `Perf/total_env_steps` at each "
                        "logging iteration): episode length, episode return (each rank's mean over the episodes "
                        "ended in the interval, then mean over ranks) and the linear- and angular-velocity "
                        "tracking rewards (per control step, mean over the envs and the logging interval; runs "
                        "logged before 2026-12-01 carry the interval's last step; weighted and scaled by 0.02: "
                        "at most 0.04 and 0.03; mean over ranks). Thin lines with markers: each run; thick: the mean "
                        "over the configuration's runs where all of them have points; each configuration has its "
                        "own colour and line style. Configurations with more ranks reach more env steps in the "
                        "same iterations."),
}


def figure_blocks(has: dict[str, bool], rel: Path, learning_note: str | None) -> list:
    """The figures with data; a sentence instead of each one without (its file is still
    written, since the workflow declares it, but it is not shown)."""
    missing = {
        "return_vs_time": "No episode-return figure: no run logged an `Episode/return` event (no episode ended "
                          "within a logging interval).",
        "phase_times": "No per-phase figure: the runs were not traced (no `Time/*` tags; the run configuration "
                       "field trace: true turns tracing on).",
        "learning_curves": "No learning curves: " + (learning_note or "the runs logged no `Episode/length`, "
                           "`Episode/return` or `Reward/tracking_*` events") + ".",
    }
    blocks = []
    for name, filename in plots.FIGURES.items():
        if has.get(name):
            blocks.append(Image(str(rel / filename), name.replace("_", " "), FIGURE_CAPTIONS[name]))
        else:
            blocks.append(Paragraph(missing.get(name, f"No {name.replace('_', ' ')} figure: no data.")))
    return blocks


def deviations_line(path: str) -> str:
    """The deviations document linked, not copied: it is long, and the report's reader
    opens it beside the report (`path`: relative to the report's directory)."""
    name = Path(path).name
    return (f"This project's deviations from the reference system (task, physics, trainer), and why, are listed "
            f"in [{plain(name)}]({quote(Path(path).as_posix(), safe='/')}) (docs/{plain(name)} in the repository).")


def link_from(report_dir, path) -> str:
    """`path` relative to the report's folder as both are named, links not followed: the
    link a reader of the checkout follows (reports/<set>/ to docs/), whatever disk a linked
    reports/ or results/ lies on; verify composes the page's link the same way."""
    return os.path.relpath(os.path.abspath(path), os.path.abspath(report_dir))


def learning_of(metrics: list[dict], run_dirs: list | None) -> tuple[dict | None, str | None]:
    """The learning curves by configuration from the runs' event files, or None and why not."""
    if not run_dirs:
        return None, "no run directories were given (sacscale report --run-dirs)"
    return curves_by_config(run_dirs, {m["run"]: m["config"] for m in metrics if m.get("config")}), None


def draw_figures(summary: dict, metrics: list[dict], figures_dir: Path, run_dirs: list | None):
    """Every figure of the report into `figures_dir`, from the summary, the metrics and the
    runs' event files (the learning curves); ({figure: has data}, the learning curves by
    configuration or None, why there are none). verify --redraw-figures draws them again
    the same way."""
    metrics = tables.in_execution_order(summary, metrics)
    learning, note = learning_of(metrics, run_dirs)
    return plots.write_all(summary, metrics, figures_dir, learning, note), learning, note


def build(
    summary: dict,
    metrics: list[dict],
    figures_dir: Path,
    report_dir: Path,
    environment: dict | None = None,
    model: dict | None = None,
    probe: dict | None = None,
    verification: dict | None = None,
    manifest: dict | None = None,
    deviations: str | None = None,
    run_dirs: list | None = None,
    attempts: list[str] | None = None,
    evaluations: dict[str, dict] | None = None,
    video: tuple[Path, dict] | None = None,
    draw: bool = True,
    page_format: int = PAGE_FORMAT,
) -> Document:
    """`video`: (the best run's video, its record from sacscale render-best), or None.
    `deviations`: the deviations document's path relative to the report's directory (linked).
    `run_dirs`: the runs' directories (event files), for the learning curves; None
    leaves that figure out (with a sentence saying why). `draw`: False composes the page
    without drawing its figures (verify compares the page so). `page_format`: the page as
    that format wrote it (sacscale.report.page_format)."""
    plan = (environment or {}).get("plan") or summary.get("meta", {})
    metrics = tables.in_execution_order(summary, metrics)
    doc = Document(title=f"{TITLE_OPENING}{plain(run_set_name(summary, environment))}")

    if draw:
        has, learning, note = draw_figures(summary, metrics, figures_dir, run_dirs)
    else:
        learning, note = learning_of(metrics, run_dirs)
        has = plots.figures_with_data(metrics, learning)
    seed_shaped = reproduces_seed(summary)

    doc.add(Paragraph(at_a_glance(summary, metrics, probe, page_format)))
    doc.add(*verdict_section(summary, metrics, plan, probe, evaluations, run_checks_line(run_dirs), page_format))
    if seed_shaped:
        doc.add(Heading("Against the seed", 3), tables.seed_table(summary), SEED_TABLE)
    doc.add(Paragraph(f"Comparisons: {plain(summary.get('pairing', ''))}."))
    doc.add(*run_list_section(summary, metrics, attempts))

    doc.add(Heading("Results"), tables.config_table(summary),
            Heading("Ratios and their spread", 3), tables.comparison_table(summary),
            Heading(tables.CI_TITLE, 3), tables.ci_table(summary),
            Heading("Per-run numbers", 3), tables.runs_table(metrics),
            Heading(tables.WINDOW_TITLE, 3), *window_blocks(summary, metrics))
    phase_table = tables.phase_table(metrics)
    if phase_table is not None:
        doc.add(Heading(tables.PHASE_TITLE, 3), phase_table)
    quality = tables.quality_table(evaluations or {}, metrics)
    if quality is not None:
        doc.add(Heading(tables.QUALITY_TITLE, 3), quality)
    if learning:
        logged = tables.logged_tracking_table(learning, tracking_baselines(),
                                              {m["run"]: m.get("total_env_steps") for m in metrics})
        if logged is not None:
            doc.add(Heading(tables.LOGGED_TRACKING_TITLE, 3), logged)
    time_to_quality = tables.time_to_quality_table(summary)
    if time_to_quality is not None:
        doc.add(Heading(tables.TIME_TO_QUALITY_TITLE, 3), time_to_quality)
    trainers = {name: rc.get("trainer", "sacscale") for name, rc in (plan.get("run_configs") or {}).items()}
    if any(t != "sacscale" for t in trainers.values()):
        doc.add(Heading(tables.TRAINERS_TITLE, 3), tables.trainers_table(summary, metrics, trainers))

    rel = Path(figures_dir).resolve().relative_to(Path(report_dir).resolve())
    doc.add(Heading("Figures"), *figure_blocks(has, rel, note))
    if video is not None:
        doc.add(*video_section(*video, Path(report_dir)))

    # a record that was not given leaves its section out
    if environment:
        doc.add(Heading("Environment"), *environment_section(environment))
    if model:
        doc.add(Heading("Model"), *model_section(model))
    if probe:
        doc.add(Heading("Correctness probe"), *probe_section(probe))
    if verification or manifest:
        doc.add(Heading("Evidence"), *evidence_section(verification, manifest))
    doc.add(Heading("Metric definitions"),
            Bullets([f"`{k}`: {plain(v) if page_format >= 2 else v}" for k, v in DEFINITIONS.items()]),
            Paragraph("Ratio of means = mean(compared) / mean(baseline). Weak-scaling efficiency = "
                      "ratio / (ranks of compared / ranks of baseline)."))
    if deviations:
        doc.add(Heading(DEVIATIONS_TITLE), Paragraph(deviations_line(deviations)))
    doc.add(Heading("Limitations"), Bullets(LIMITATIONS))
    return doc


def video_section(path: Path, record: dict, report_dir: Path) -> list:
    """The best-evaluated run's policy on video, with why that run and what it shows."""
    rel = Path(path).resolve().relative_to(report_dir.resolve()).as_posix()
    steps = f", {record['env_steps']:,} env steps per rank" if isinstance(record.get("env_steps"), int) else ""
    caption = (f"The policy of {code(record['run'])}{steps}, the best of {len(record.get('scores', {}))} evaluated "
               f"runs by {plain(record['rule'])}: score {record['score']:.3f} (normalised tracking lin "
               f"{_two(record['tracking_lin'])}, yaw {_two(record['tracking_yaw'])}; "
               f"{record['fall_rate']:.2f} falls per "
               f"episode). Deterministic actions, nominal gains; commands {code(record.get('commands'))} (vx, vy m/s, "
               f"yaw rate rad/s: seconds), {plain(record.get('seconds'))} s at {plain(record.get('fps'))} fps.")
    return [Heading(VIDEO_TITLE, 3), Image(rel, plain(f"the policy of {record['run']} walking"), caption=caption)]


VIDEO_TITLE = "The best run's policy on video"


def run_set_name(summary: dict, environment: dict | None) -> str:
    """The run set a report of these records is of, as its title names it."""
    plan = (environment or {}).get("plan") or summary.get("meta", {})
    return plan.get("run_set") or summary.get("meta", {}).get("run_set") or "?"


def run_set_of_inputs(summary_path, environment=None) -> str:
    """run_set_name of the report's input files, read as read_inputs reads them (RecordError)."""
    # its name only: read_inputs judges the rest, after the runs' own records
    return run_set_name(_record(summary_path, SUMMARY_SHAPE), _load(environment, ENVIRONMENT_SHAPE))


def _summary(path) -> dict:
    """summary.json read as _record reads it, its comparisons naming configurations it holds
    (one it lacks ended the report in a KeyError naming neither the file nor the key) and
    its lists of one entry per run of one length (else matplotlib's ValueError named neither)."""
    summary = _record(path, SUMMARY_SHAPE)
    problem = summary_reference_problem(summary) or summary_consistency_problem(summary)
    if problem:
        raise RecordError(f"{path}: not a summary aggregate wrote ({problem}); run aggregate again")
    return summary


def _two(value) -> str:
    return "n/a (no sample counted)" if value is None else f"{value:.2f}"


def read_inputs(
    summary_path, metrics_paths, report_dir: Path, environment=None, model=None, probe=None, verification=None,
    manifest=None, deviations=None, run_dirs=None, attempts=None, evaluations=None, video=None, video_record=None,
) -> tuple[dict, list[dict], dict]:
    """(summary, metrics, build's other arguments) read from the report's input files;
    RecordError names a file the report cannot read."""
    metrics = [_record(p, METRICS_SHAPE) for p in metrics_paths]
    for path, record in zip(metrics_paths, metrics):
        if record.get("steady_env_steps_per_s") is None:  # the summary leaves it out: the plots' rows would not match
            raise RecordError(f"{path}: steady_env_steps_per_s is null: the run has no steady rate to report "
                              "(analyze-run gives one for every run it can read)")
    # after the runs' own records: a run without a rate is the cause its summary's shorter list shows
    summary = _summary(summary_path)
    return summary, metrics, dict(
        environment=_load(environment, ENVIRONMENT_SHAPE), model=_load(model), probe=_load(probe, PROBE_SHAPE),
        verification=_load(verification), manifest=_load(manifest),
        deviations=link_from(report_dir, deviations) if deviations and Path(deviations).is_file() else None,
        run_dirs=[Path(d) for d in run_dirs] if run_dirs else None,
        attempts=attempts,
        evaluations={Path(p).stem: _record(p, EVALUATION_SHAPE) for p in evaluations or []},
        video=((Path(video), _record(video_record, VIDEO_SHAPE))
               if video and video_record else None),
    )


def write_report(summary_path, metrics_paths, output_md, output_html, figures_dir, prepare=None,
                 **inputs) -> Document:
    """The report from its input files (read_inputs' arguments): report.md, report.html,
    numbers.json and the figures. `prepare(others)`, when given, is called once every input
    has been read and before anything is written, and returns build's other arguments."""
    report_dir = Path(output_md).parent
    summary, metrics, others = read_inputs(summary_path, metrics_paths, report_dir, **inputs)
    if prepare is not None:
        others = prepare(others)
    doc = build(summary, metrics, Path(figures_dir), report_dir, **others)
    atomic_write_text(output_md, to_markdown(doc))
    # the numbers the tables show, before formatting, for verification to compare one by one
    atomic_write_text(report_dir / NUMBERS_NAME, json.dumps(report_numbers(summary, metrics), indent=1) + "\n")
    # figures linked, not embedded: the page sits beside figures/ (the audit zip is the self-contained form)
    atomic_write_text(output_html, to_html(doc, Path(output_html).parent, embed_images=False))
    return doc
