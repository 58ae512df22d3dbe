"""The numbers the report's tables show, as values before formatting (`numbers.json`).

The report stage writes them beside report.md; verification recomputes them from the
evidence, compares them number by number, and checks that every numeric cell of the
report's tables shows them (sacscale.evidence.report_check). Each table is
`{"title", "header", "kinds", "rows"}`; a row is `{"key", "cells", "shown", "withheld"}`:
`key` the cells that name the row (run, configuration, "compared / baseline", ...),
`cells` `{column: [values in the order the cell shows them]}` (None: shown as n/a), `shown`
whether the table prints the row (time to quality leaves out thresholds no repeat
reached), `withheld` the columns the table may leave without a number (an interval over
too few repeats). `kinds` names each column's kind, which sets its tolerance.
"""

from __future__ import annotations

from sacscale.analysis.metrics import QUALITY_THRESHOLDS
from sacscale.report import tables
from sacscale.report.text import unmarkdown

FORMAT = 1


def _table(title: str, table, kinds: dict[str, str], rows: list[dict]) -> dict:
    return {"title": title, "header": [unmarkdown(h) for h in table.header], "kinds": kinds, "rows": rows}


def _row(key: list, cells: dict[str, list], shown: bool = True, withheld: tuple = ()) -> dict:
    return {"key": [str(k) for k in key], "cells": cells, "shown": shown, "withheld": list(withheld)}


def _pair(c: dict) -> list[str]:
    return [f"{c['compared']} / {c['baseline']}"]


def seed_numbers(summary: dict) -> dict:
    configs = summary["configs"]
    header = [unmarkdown(h) for h in tables.seed_table(summary).header]
    rows = []
    for c in summary.get("comparisons", []):
        b, o = configs[c["baseline"]], configs[c["compared"]]
        rows.append(_row(_pair(c), {header[1]: [b["mean"], b["std"]], header[2]: [o["mean"], o["std"]],
                                    header[3]: [c["ratio_of_means"]]}))
    return _table("the seed-shaped table", tables.seed_table(summary),
                  {header[1]: "rate", header[2]: "rate", header[3]: "ratio"}, rows)


def config_numbers(summary: dict) -> dict:
    rows = [_row([name], {"ranks": [s.get("world_size")], "n": [s["n"]], "mean": [s["mean"]], "std": [s["std"]],
                          "min": [s["min"]], "max": [s["max"]], "per repeat": list(s["values"])})
            for name, s in summary["configs"].items()]
    kinds = {"ranks": "count", "n": "count", "mean": "rate", "std": "rate", "min": "rate", "max": "rate",
             "per repeat": "rate"}
    return _table("the configuration table", tables.config_table(summary), kinds, rows)


def ratio_numbers(summary: dict) -> dict:
    rows = []
    for c in summary.get("comparisons", []):
        stats = c.get("per_repeat_ratio_stats") or {}
        rng = c.get("ratio_range")
        rows.append(_row(_pair(c), {
            "of means": [c.get("ratio_of_means")], "propagated std": [c.get("ratio_std_propagated")],
            "per repeat": list((c.get("per_repeat_ratios") or {}).values()) or [None],
            "per-repeat spread": [stats["min"], stats["max"], stats["std"]] if stats.get("n") else [None],
            "extreme range": list(rng) if rng else [None],
            "weak-scaling efficiency": [c.get("weak_scaling_efficiency")]}))
    kinds = {"of means": "ratio", "propagated std": "ratio", "per repeat": "ratio", "per-repeat spread": "ratio",
             "extreme range": "ratio", "weak-scaling efficiency": "ratio"}
    return _table("the ratio table", tables.comparison_table(summary), kinds, rows)


def run_numbers(metrics: list[dict]) -> dict:
    rows = [_row([m["run"]], {
        "steady steps/s": [m["steady_env_steps_per_s"]], "tail-mean total_fps": [m.get("tail_mean_total_fps")],
        "iterations": [m.get("iterations")], "wall s": [m.get("wall_time_s")], "event span s": [m.get("event_span_s")],
        "final return": [m.get("final_episode_return")], "final length": [m.get("final_episode_length")],
        "per rank steady steps/s": [r.get("steady_env_steps_per_s") for r in m.get("ranks", [])]}) for m in metrics]
    kinds = {"steady steps/s": "rate", "tail-mean total_fps": "rate", "iterations": "count", "wall s": "seconds",
             "event span s": "seconds", "final return": "episode", "final length": "episode",
             "per rank steady steps/s": "rate"}
    return _table("the per-run table", tables.runs_table(metrics), kinds, rows)


def interval_numbers(summary: dict) -> dict:
    rows = []
    for c in summary.get("comparisons", []):
        ci = c.get("ratio_ci95")
        few = bool(ci) and (c.get("ci_repeats") or 0) < tables.MIN_REPEATS
        rows.append(_row(_pair(c), {"of means": [c.get("ratio_of_means")], "95% CI": list(ci) if ci else [None],
                                    "paired repeats": [c.get("ci_repeats", 0)]},
                         withheld=("95% CI",) if few else ()))
    kinds = {"of means": "ratio", "95% CI": "ratio", "paired repeats": "count"}
    return _table("the confidence-interval table", tables.ci_table(summary), kinds, rows)


def window_numbers(metrics: list[dict], short_s: float) -> dict:
    rows = []
    for m in metrics:
        w = m.get("window") or {}
        seconds = w.get("seconds")
        rows.append(_row([m["run"]], {
            "window s": [seconds], "window events": [w.get("window_events")], "events": [w.get("events")],
            "steps": [w.get("first_step"), w.get("last_step")],
            "warning": [short_s] if seconds is not None and seconds < short_s else []}))
    kinds = {"window s": "seconds", "window events": "count", "events": "count", "steps": "count",
             "warning": "seconds"}
    return _table("the measurement-window table", tables.window_table(metrics, short_s), kinds, rows)


def time_to_quality_numbers(summary: dict) -> dict | None:
    """Every threshold a configuration measured, reached or not; the table shows the reached."""
    rows = []
    for name, s in summary["configs"].items():
        for key, (_, threshold) in QUALITY_THRESHOLDS.items():
            q = (s.get("time_to_quality") or {}).get(key)
            if q is None:
                continue
            label = tables.QUALITY_LABELS.get(key, key).format(t=threshold)
            rows.append(_row([name, label], {"reached": [q["reached"], q["of"]],
                                             "env steps (mean)": [(q.get("env_steps") or {}).get("mean")],
                                             "seconds (mean)": [(q.get("seconds") or {}).get("mean")]},
                             shown=bool(q["reached"])))
    table = tables.time_to_quality_table(summary)
    if table is None:
        return None
    kinds = {"reached": "count", "env steps (mean)": "steps", "seconds (mean)": "seconds"}
    return _table("the time-to-quality table", table, kinds, rows)


def report_numbers(summary: dict, metrics: list[dict]) -> dict:
    """`{"format", "tables": {name: table}}`: every table of numbers the report derives from
    the summary and the runs' metrics (the seed-shaped table only for GPU sets)."""
    metrics = tables.in_execution_order(summary, metrics)
    out = {}
    if tables.reproduces_seed(summary):
        out["seed"] = seed_numbers(summary)
    out.update(configurations=config_numbers(summary), ratios=ratio_numbers(summary), runs=run_numbers(metrics),
               intervals=interval_numbers(summary),
               windows=window_numbers(metrics, summary.get("short_window_s", 30.0)))
    time_to_quality = time_to_quality_numbers(summary)
    if time_to_quality is not None:
        out["time_to_quality"] = time_to_quality
    return {"format": FORMAT, "tables": out}
