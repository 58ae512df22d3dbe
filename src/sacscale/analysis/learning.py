"""Learning curves against env steps, to compare runs per env step (e.g. 1 rank vs 2).

Episode return and length are logged by every rank over the episodes its own envs
finished; the tracking rewards and the curriculum's penalty scale are the latest values
of each rank's task. A run's curve at a log point is the mean over ranks, placed at the
run's cumulative env steps of all ranks (`Perf/total_env_steps`, rank 0) at that
iteration. Curves whose tag a run never logged are empty.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np

from sacscale.analysis.events import EventFileError
from sacscale.analysis.metrics import run_events
from sacscale.task.walk_rules import stand_still_tracking
from sacscale.reading import loads_record, read_limited

CURVES = {
    "return": "Episode/return",
    "length": "Episode/length",
    "tracking_lin_vel": "Reward/tracking_lin_vel",
    "tracking_ang_vel": "Reward/tracking_ang_vel",
    "penalty_scale": "Curriculum/penalty_scale",
}


def learning_curves(run_dir: str | Path) -> dict[str, dict[str, list[float]]]:
    """`{curve name: {"env_steps": [...], "value": [...]}}` of one run (names: CURVES), of
    ours or of the reference trainer (its events in our tags; it logs no tracking terms
    under ours, so those curves are empty)."""
    return _curves_and_env_steps(run_dir)[0]


def _curves_and_env_steps(run_dir: str | Path) -> tuple[dict[str, dict[str, list[float]]], float]:
    """learning_curves(run_dir) and the run's env steps at its last log point."""
    ranks = run_events(Path(run_dir))[1]
    total = {s.step: s.value for s in ranks[0].get("Perf/total_env_steps", [])}
    if not total:
        raise EventFileError(f"{run_dir}: no Perf/total_env_steps events in rank 0")
    out = {}
    for name, tag in CURVES.items():
        per_step: dict[int, list[float]] = {}
        for series in ranks.values():
            for s in series.get(tag, []):
                per_step.setdefault(s.step, []).append(s.value)
        steps = sorted(step for step in per_step if step in total)
        out[name] = {"env_steps": [total[s] for s in steps],
                     "value": [_finite_mean(per_step[s]) for s in steps]}
    return out, total[max(total)]


def _finite_mean(values: list[float]) -> float:
    """Mean over the ranks that logged a finite value (NaN when none did)."""
    good = [v for v in values if np.isfinite(v)]
    return float(np.mean(good)) if good else float("nan")


def finite(curve: dict[str, list[float]]) -> dict[str, list[float]]:
    """The curve without its non-finite points (a rank that finished no episode logs NaN)."""
    keep = [(x, y) for x, y in zip(curve["env_steps"], curve["value"]) if math.isfinite(x) and math.isfinite(y)]
    return {"env_steps": [x for x, _ in keep], "value": [y for _, y in keep]}


def mean_curve(curves: list[dict[str, list[float]]]) -> dict[str, list[float]]:
    """The pointwise mean of several runs' curves of one name (e.g. the repeats of one
    configuration), on a common env-step grid.

    Empty curves (and non-finite points) are left out; `runs` says how many curves the
    mean is over. The grid is every env-step value of those curves inside the range that
    all of them cover (max of the first .. min of the last), so the mean is over the same
    runs everywhere; a curve is linearly interpolated onto grid points that it did not
    log itself (repeats of one configuration usually log at the same env steps, and then
    nothing is interpolated). Curves with no common range give an empty mean.
    """
    curves = [c for c in (finite(c) for c in curves) if c["env_steps"]]
    if not curves:
        return {"env_steps": [], "value": [], "runs": 0}
    lo = max(c["env_steps"][0] for c in curves)
    hi = min(c["env_steps"][-1] for c in curves)
    grid = sorted({x for c in curves for x in c["env_steps"] if lo <= x <= hi})
    if not grid:
        return {"env_steps": [], "value": [], "runs": len(curves)}
    values = np.mean([np.interp(grid, c["env_steps"], c["value"]) for c in curves], axis=0)
    return {"env_steps": [float(x) for x in grid], "value": [float(v) for v in values], "runs": len(curves)}


_RUN_NAME = re.compile(r"^.+_r\d+_(?P<config>[^/]+)$")


def run_config(run_dir: str | Path, known: dict[str, str] | None = None) -> str:
    """A run directory's configuration: `known[run name]` (e.g. from the metrics), else
    run.json's resolved config, else the `{prefix}_r{k}_{config}` directory name, else the name."""
    run_dir = Path(run_dir)
    if known and known.get(run_dir.name):
        return known[run_dir.name]
    run_json = run_dir / "run.json"
    if run_json.is_file():
        try:
            config = loads_record(read_limited(run_json).decode("utf-8")).get("resolved_config", {}).get("config")
        except (ValueError, AttributeError):  # not JSON, not UTF-8, too large, another shape: named by its dir
            config = None
        if config:
            return config
    match = _RUN_NAME.match(run_dir.name)
    return match.group("config") if match else run_dir.name


def single_run_groups(curves_by_label: dict[str, dict]) -> dict[str, dict]:
    """curves_by_config()'s shape for runs that are each their own group (compare-learning)."""
    return {label: {"runs": {label: curves}, "mean": {name: mean_curve([c]) for name, c in curves.items()}}
            for label, curves in curves_by_label.items()}


def curves_by_config(run_dirs: list[str | Path], known: dict[str, str] | None = None) -> dict[str, dict]:
    """Learning curves of a run set, grouped by configuration (in order of first appearance):
    `{config: {"runs": {run name: curves}, "mean": {curve name: mean_curve(...)}}}`.
    `known` maps run names to configurations (see run_config)."""
    groups: dict[str, dict] = {}
    for run_dir in run_dirs:
        config = run_config(run_dir, known)
        groups.setdefault(config, {"runs": {}})["runs"][Path(run_dir).name] = learning_curves(run_dir)
    for group in groups.values():
        group["mean"] = {name: mean_curve([c[name] for c in group["runs"].values()]) for name in CURVES}
    return groups


def tail_mean(curve: dict[str, list[float]], fraction: float = 0.2) -> float:
    """Mean of the last `fraction` of a curve's points (NaN for an empty curve)."""
    values = curve["value"]
    if not values:
        return float("nan")
    return float(np.mean(values[-max(1, int(len(values) * fraction)):]))


TRACKING = ("tracking_lin_vel", "tracking_ang_vel")
QUALITY_FRACTION = 0.1  # the learning issue's measure: mean of the last 10% of the run's log points


def tracking_baselines() -> dict[str, float]:
    """Stand-still values and maxima of the tracking curves (the task's own definition)."""
    return stand_still_tracking()


def compare_learning(runs: dict[str, str | Path], fraction: float = 0.2) -> dict:
    """Curves and end-of-run means of several runs, labelled; per run also the normalised
    tracking (term / its maximum, mean of the last 10% of log points), next to what
    standing still earns."""
    base = tracking_baselines()
    result = {"tail_fraction": fraction, "quality_fraction": QUALITY_FRACTION, "stand_still": base, "runs": {}}
    for label, run_dir in runs.items():
        curves, env_steps = _curves_and_env_steps(run_dir)
        entry = {"run_dir": str(run_dir), "env_steps": env_steps}
        for name, curve in curves.items():
            entry[f"first_{name}"] = curve["value"][0] if curve["value"] else float("nan")
            entry[f"tail_mean_{name}"] = tail_mean(curve, fraction)
        for term in TRACKING:
            top = base[f"{term}_max"]
            entry[f"normalised_{term}"] = tail_mean(curves[term], QUALITY_FRACTION) / top
            entry[f"stand_still_normalised_{term}"] = base[term] / top
        entry["curves"] = curves
        result["runs"][label] = entry
    return result


AT_STEPS = ("length", *TRACKING)


def at_env_steps(result: dict, points: list[float], half_width: float) -> list[dict]:
    """The runs of a `compare_learning` result side by side at equal env steps: per point,
    each run's mean episode length and normalised tracking (term / its maximum) over its log
    points within +-half_width env steps of it (NaN where a run has none there)."""
    rows = []
    for point in points:
        row = {"env_steps": point, "half_width": half_width, "runs": {}}
        for label, entry in result["runs"].items():
            values = {}
            for name in AT_STEPS:
                curve = finite(entry["curves"][name])
                x, y = np.asarray(curve["env_steps"]), np.asarray(curve["value"])
                near = y[np.abs(x - point) <= half_width]
                mean = float(near.mean()) if near.size else float("nan")
                values[name] = mean / result["stand_still"][f"{name}_max"] if name in TRACKING else mean
            row["runs"][label] = values
        rows.append(row)
    return rows
