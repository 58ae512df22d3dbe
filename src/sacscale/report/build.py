"""Assemble the run set's report (Markdown + HTML + figures) from the pipeline's JSON."""

from __future__ import annotations

import json
from pathlib import Path

from sacscale.analysis.learning import curves_by_config
from sacscale.analysis.metrics import DEFINITIONS
from sacscale.evidence.atomic import atomic_write_text
from sacscale.report import plots, tables
from sacscale.report.document import (
    Bullets, Code, Document, Heading, Image, Paragraph, Raw, Table, block_markdown, to_html, to_markdown,
)

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
    "Repeats are few: the 95% confidence interval is a paired bootstrap over them (percentile method), "
    "which is too narrow for very few repeats; read it next to the per-repeat ratios and the extreme range.",
    "Env steps are control steps (one policy action of one environment), not physics substeps.",
]


def _load(path) -> dict | None:
    if not path:
        return None
    p = Path(path)
    return json.loads(p.read_text()) if p.is_file() else None


def _fmt_scalar(v) -> str:
    if isinstance(v, float):
        return f"{v:,.6g}"
    return str(v)


def _lines(text: str | None, limit: int = 60) -> str:
    lines = (text or "").rstrip("\n").splitlines()
    if len(lines) > limit:
        lines = lines[:limit] + [f"... ({len(lines) - limit} more lines in environment.json)"]
    return "\n".join(lines)


def environment_section(env: dict | None) -> list:
    if not env:
        return [Paragraph("No environment record was given.")]
    t, v = env.get("torch", {}), env.get("versions", {})
    project = env.get("project", {})
    if project.get("commit"):
        commit = f"`{project['commit']}`" + {True: " (uncommitted changes)", False: " (clean)"}.get(project.get("dirty"), "")
        diff = project.get("diff") or {}
        if project.get("dirty") and diff.get("file"):
            commit += (f" plus the stored diff (`{diff['file']}`, {diff.get('bytes', 0):,} bytes, sha256 "
                       f"`{str(diff.get('sha256', ''))[:12]}…`; rebuild the code: `git checkout {project['commit'][:12]} "
                       f"&& git apply --binary {diff['file']}`)")
        elif project.get("dirty"):
            commit += "; no diff was stored (a set made before diffs were recorded)"
    else:
        commit = f"unknown ({project.get('error') or 'not a git checkout'})"
    gpus = t.get("gpus") or []
    drivers = sorted({g.get("driver") for g in env.get("nvidia", {}).get("gpus", []) if g.get("driver")})
    learner = env.get("learner", {})
    items = [
        f"project commit: {commit}",
        f"Python {env.get('python', {}).get('version')}, torch {v.get('torch')}, CUDA {t.get('cuda')}, "
        f"cuDNN {t.get('cudnn')}, NCCL {t.get('nccl')}, MuJoCo {v.get('mujoco')}, Snakemake {v.get('snakemake')}",
        "GPUs: " + (", ".join(f"{g['name']} ({g['memory_mib']:,} MiB)" for g in gpus) or "none visible")
        + (f"; driver {', '.join(drivers)}" if drivers else ""),
        f"CPU: {env.get('cpu', {}).get('model')}; {env.get('cpu', {}).get('available_count')} CPUs available "
        f"({env.get('cpu', {}).get('available')})",
        "NCCL_* / CUDA_VISIBLE_DEVICES: "
        + (", ".join(f"`{k}={val}`" for k, val in env.get("env", {}).items()) or "none set"),
        f"learner module imported: `{learner.get('file') or learner.get('error')}`; graph hooks: "
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
        if key in ("pass", "comparisons"):
            continue
        if isinstance(value, (int, float, str, bool)) or value is None:
            items.append(f"{key}: {_fmt_scalar(value)}")
        elif isinstance(value, (dict, list)) and len(json.dumps(value)) <= 200:
            items.append(f"{key}: `{json.dumps(value)}`")
    if items:
        blocks.append(Bullets(items))
    rows = [c for c in probe.get("comparisons") or [] if isinstance(c, dict)]
    if rows:
        header = list(dict.fromkeys(k for c in rows for k in c))
        blocks.append(Table(header=header, rows=[[_fmt_scalar(c.get(k, "")) for k in header] for c in rows],
                            caption="per-tensor agreement of the data-parallel ranks with the single-rank reference"))
    return blocks


def model_section(model: dict | None) -> list:
    if not model:
        return [Paragraph("No model record was given.")]
    scalars = {k: v for k, v in model.items() if isinstance(v, (int, float, str, bool))}
    return [Bullets([f"{k}: {_fmt_scalar(v)}" for k, v in scalars.items()] or ["(no scalar fields)"])]


def evidence_section(verification: dict | None, manifest: dict | None) -> list:
    items = []
    if manifest:
        items.append(f"`MANIFEST.sha256`: {manifest['files']} files, {manifest['bytes']:,} bytes "
                     "(check without this package: `cd results/<run set> && sha256sum -c MANIFEST.sha256`)")
    if verification:
        state = ("all files match and everything derived recomputes (metrics, records, summary)"
                 if verification.get("ok") else "FAILED")
        items.append(f"verification: {state} ({verification.get('files_checked')} files, "
                     f"{verification.get('runs_checked')} runs)")
    return [Bullets(items)] if items else [Paragraph("No evidence manifest was given.")]


def headline_paragraphs(summary: dict) -> list:
    """One sentence per comparison: ratio of means, spread, and its confidence interval."""
    out = []
    for c in summary.get("comparisons", []):
        if c.get("ratio_of_means") is not None:
            per = c.get("per_repeat_ratio_stats") or {}
            spread = f"; per-repeat ratios {per['min']:.3f} .. {per['max']:.3f}" if per.get("n") else ""
            out.append(Paragraph(
                f"`{c['compared']}` / `{c['baseline']}`: ratio of means {c['ratio_of_means']:.3f}x "
                f"(propagated std ±{c['ratio_std_propagated']:.3f}{spread})."
            ))
            out.append(Paragraph(ci_sentence(c)))
    return out


def ci_sentence(c: dict) -> str:
    ci = c.get("ratio_ci95")
    if not ci:
        return (f"`{c['compared']}` / `{c['baseline']}`: no confidence interval "
                f"({c.get('ci_repeats', 0)} paired repeat(s); it needs 2 or more).")
    return (f"`{c['compared']}` / `{c['baseline']}`: 95% confidence interval of the ratio of means "
            f"{ci[0]:.3f} .. {ci[1]:.3f} (paired bootstrap over {c['ci_repeats']} repeats).")


def window_blocks(summary: dict, metrics: list[dict]) -> list:
    blocks = [tables.window_table(metrics, summary.get("short_window_s", 30.0))]
    short = summary.get("short_windows") or []
    if short:
        blocks.append(Paragraph(
            f"Warning: {len(short)} run(s) measured over less than {summary.get('short_window_s', 30.0):g} s "
            f"({', '.join(f'`{r}`' for r in short)}): too short a window for a stable rate; run more iterations."))
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
            by_repeat.setdefault(str(m.get("repeat")), []).append(str(m.get("config")))
        order = "; ".join(f"r{k}: {', '.join(v)}" for k, v in by_repeat.items())
        blocks.append(Paragraph(f"Execution order ({schedule} schedule; both configurations of a repeat use the "
                                f"same seed): {order}."))
        missing = [r for r in planned if r not in have]
        blocks.append(Paragraph(f"Runs planned: {len(planned)}; with evidence: {len(planned) - len(missing)}"
                                + (f"; missing: {', '.join(f'`{r}`' for r in missing)}" if missing else "") + "."))
    if attempts:
        blocks.append(Paragraph("Failed or stopped attempts (kept under logs/, not evidence; each was rerun): "
                                + ", ".join(f"`{a}`" for a in attempts) + "."))
    return blocks


def number_blocks(summary: dict, metrics: list[dict], current: bool = True) -> list[tuple[str, str, bool]]:
    """`[(title, Markdown text, required)]`: the report's parts that state numbers of the
    evidence, rendered exactly as `build` renders them, for verification to find in a
    stored report. `current=False` (a set made before confidence intervals and windows
    were reported): those parts are not required."""
    def md(block) -> str:
        return block_markdown(block).rstrip("\n")

    out = [("the seed-shaped table", md(tables.seed_table(summary)), True),
           ("the configuration table", md(tables.config_table(summary)), True),
           ("the ratio table", md(tables.comparison_table(summary)), True),
           ("the per-run table", md(tables.runs_table(metrics)), True),
           ("the confidence-interval table", md(tables.ci_table(summary)), current),
           ("the measurement-window table", md(tables.window_table(metrics, summary.get("short_window_s", 30.0))),
            current)]
    for p in headline_paragraphs(summary):
        new = "confidence interval" in p.text
        out.append(("a headline ratio" if not new else "a headline confidence interval", md(p), current or not new))
    return out


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
) -> Document:
    """`run_dirs`: the runs' directories (event files), for the learning curves; None
    leaves that figure a placeholder."""
    plan = (environment or {}).get("plan") or summary.get("meta", {})
    run_set = plan.get("run_set") or summary.get("meta", {}).get("run_set") or "?"
    doc = Document(title=f"sacscale run set `{run_set}`")

    if run_dirs:
        learning, note = curves_by_config(run_dirs, {m["run"]: m["config"] for m in metrics if m.get("config")}), None
    else:
        learning, note = None, "no run directories were given (sacscale report --run-dirs)"
    has = plots.write_all(summary, metrics, figures_dir, learning, note)
    cpu_only = all((s.get("devices") or "").startswith("cpu") for s in summary["configs"].values())

    intro = (
        f"Preset `{plan.get('preset', '?')}` ({plan.get('preset_reason', 'reason not recorded')}). "
        f"{len(metrics)} runs: configurations {', '.join(f'`{c}`' for c in summary['order'])}, "
        f"{plan.get('repeats', '?')} repeat(s) of {plan.get('iterations', '?')} iterations, one run at a time."
    )
    doc.add(Heading("Summary"), Paragraph(intro))
    if plan.get("description"):
        doc.add(Paragraph(plan["description"]))
    if cpu_only:
        doc.add(Paragraph("All runs here are CPU ranks (gloo): this run set shows the pipeline and the code path "
                          "working end to end; its throughput says nothing about the GPU system."))
    doc.add(*headline_paragraphs(summary))
    doc.add(Paragraph(f"Comparisons: {summary.get('pairing', '')}."))
    doc.add(*run_list_section(summary, metrics, attempts))

    doc.add(Heading("Results"), tables.seed_table(summary), tables.config_table(summary),
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

    rel = Path(figures_dir).resolve().relative_to(Path(report_dir).resolve())
    doc.add(Heading("Figures"))
    captions = {
        "throughput_by_repeat": "Steady env steps/s of every run, by repeat.",
        "scaling_bars": "Mean steady env steps/s per configuration; bars: std; dots: repeats; labels: ratio of means.",
        "cumulative_steps": "Cumulative env steps of all ranks against wall time (rank 0 events).",
        "return_vs_time": "Episode return (rank 0, mean over episodes ended in each logging interval) against wall time.",
        "phase_times": ("Per-phase time per iteration from the Time/* tags, every rank of each traced configuration "
                        "(tail mean, then mean over repeats)."),
        "learning_curves": ("Learning against cumulative env steps of all ranks (rank 0 Perf/total_env_steps at each "
                            "logging iteration): episode length, episode return (each rank's mean over the episodes "
                            "ended in the interval, then mean over ranks) and the linear- and angular-velocity "
                            "tracking rewards (latest per-control-step value, env mean, weighted and scaled by 0.02: "
                            "at most 0.04 and 0.03; mean over ranks). Thin: each run; thick: mean over the "
                            "configuration's runs where all of them have points (linear interpolation onto their "
                            "common env steps). Configurations with more ranks reach more env steps in the same "
                            "iterations."),
    }
    for name, filename in plots.FIGURES.items():
        if name == "phase_times" and not has["phase_times"]:
            doc.add(Paragraph("No per-phase plot: the runs were not traced (no `Time/*` tags)."))
            continue
        if name == "learning_curves" and not has["learning_curves"]:
            doc.add(Paragraph("No learning curves: " + (note or "the runs logged no `Episode/length`, "
                              "`Episode/return` or `Reward/tracking_*` events") + "."))
            continue
        doc.add(Image(str(rel / filename), name.replace("_", " "), captions[name]))

    doc.add(Heading("Environment"), *environment_section(environment))
    doc.add(Heading("Model"), *model_section(model))
    doc.add(Heading("Correctness probe"), *probe_section(probe))
    doc.add(Heading("Evidence"), *evidence_section(verification, manifest))
    doc.add(Heading("Metric definitions"),
            Bullets([f"`{k}`: {v}" for k, v in DEFINITIONS.items()]),
            Paragraph("Ratio of means = mean(compared) / mean(baseline). Weak-scaling efficiency = "
                      "ratio / (ranks of compared / ranks of baseline)."))
    doc.add(Heading("Reference: the seed's figures"), SEED_TABLE)
    doc.add(Heading("Deviations from the reference system"))
    if deviations:
        doc.add(Raw(deviations))
    else:
        doc.add(Paragraph("No deviations document (docs/deviations.md) was given."))
    doc.add(Heading("Limitations"), Bullets(LIMITATIONS))
    return doc


def write_report(
    summary_path, metrics_paths, output_md, output_html, figures_dir,
    environment=None, model=None, probe=None, verification=None, manifest=None, deviations=None, run_dirs=None,
    attempts=None, evaluations=None,
) -> Document:
    summary = json.loads(Path(summary_path).read_text())
    metrics = [json.loads(Path(p).read_text()) for p in metrics_paths]
    report_dir = Path(output_md).parent
    doc = build(
        summary, metrics, Path(figures_dir), report_dir,
        environment=_load(environment), model=_load(model), probe=_load(probe),
        verification=_load(verification), manifest=_load(manifest),
        deviations=Path(deviations).read_text() if deviations and Path(deviations).is_file() else None,
        run_dirs=[Path(d) for d in run_dirs] if run_dirs else None,
        attempts=attempts,
        evaluations={Path(p).stem: json.loads(Path(p).read_text()) for p in evaluations or []},
    )
    atomic_write_text(output_md, to_markdown(doc))
    atomic_write_text(output_html, to_html(doc, Path(output_html).parent))
    return doc
