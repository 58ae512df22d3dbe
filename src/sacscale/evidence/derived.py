"""The set's summary (summary.json, summary.csv) recomputed from the runs' metrics and the plan."""

from __future__ import annotations

import io
import math
from pathlib import Path

import pandas as pd

from sacscale.analysis.aggregate import DEFAULT_CI_METHOD, runs_table, summarize
from sacscale.evidence.interval_method import interval_method
from sacscale.evidence.result import OLDER, REL_TOL, Verification, deep_differences, load_json, split_notes

# summary.json's meta: the plan fields the workflow passes to aggregate (common.smk)
SUMMARY_META = ("run_set", "preset", "preset_reason", "repeats", "iterations", "order", "schedule",
                "execution_order")


def recompute_summary(plan: dict, metrics: list[dict], ci_method: str | None = None) -> dict:
    meta = {k: plan[k] for k in SUMMARY_META if k in plan}
    pairs = [tuple(p) for p in plan.get("pairs") or []] or None
    return summarize(metrics, list(plan["order"]), pairs, meta=meta, ci_method=ci_method or DEFAULT_CI_METHOD)


def check_summary(root: Path, plan: dict, metrics: list[dict], result: Verification, current: bool) -> dict | None:
    """The recomputed summary, or None; `current`: a set made by this code
    (sacscale.evidence.set_made), whose summary must hold every field."""
    if not (root / "summary.json").is_file():
        return None
    stored = load_json(root, "summary.json")
    method = interval_method(root, stored)  # aggregate's, or an older set's own
    result.derived.extend(method.problems)
    result.notes.extend(method.notes)
    recomputed = recompute_summary(plan, metrics, method.method)
    problems, notes = deep_differences(stored, recomputed)
    result.derived.extend(f"summary.json: {p}" for p in problems)
    split_notes(result, [f"summary.json: {n}" for n in notes], current, result.derived)
    if (root / "summary.csv").is_file():
        _check_csv(root, runs_table(metrics), result, current)
    elif current:
        result.derived.append("summary.csv: missing (summary.json is there)")
    return recomputed


def _check_csv(root: Path, table, result: Verification, strict: bool = False) -> None:
    try:
        stored = pd.read_csv(root / "summary.csv", keep_default_na=False, dtype=str)
    except (ValueError, UnicodeDecodeError) as exc:
        result.structure.append(f"summary.csv: not a readable CSV ({exc})")
        return
    fresh = pd.read_csv(io.StringIO(table.to_csv(index=False)), keep_default_na=False, dtype=str)
    split_notes(result, [f"summary.csv: column {col}: {OLDER}" for col in fresh.columns if col not in stored.columns],
           strict, result.derived)
    for col in stored.columns:
        if col not in fresh.columns:
            result.derived.append(f"summary.csv: column {col}: stored, but not derived from the metrics")
    if len(stored) != len(fresh):
        result.derived.append(f"summary.csv: {len(stored)} rows stored, {len(fresh)} runs in the metrics")
        return
    for col in [c for c in fresh.columns if c in stored.columns]:
        for i, (a, b) in enumerate(zip(stored[col], fresh[col])):
            if a == b:
                continue
            try:
                if math.isclose(float(a), float(b), rel_tol=REL_TOL, abs_tol=1e-12):
                    continue
            except ValueError:
                pass
            result.derived.append(f"summary.csv: row {i + 1} ({fresh['run'][i]}) {col}: stored {a!r}, recomputed {b!r}")
