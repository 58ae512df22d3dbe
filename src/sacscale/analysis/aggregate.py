"""Per-configuration statistics over repeats, and the scaling comparisons.

A comparison is a (baseline, compared) pair of run configurations. The seed's table
pairs a 1-GPU configuration with a 2-GPU one; when a run set has only single-rank
configurations (e.g. one GPU with a 7-CPU and a 15-CPU pool) the pairs compare the
configurations in the order listed, and the summary says so.

For each pair: ratio of means = mean(compared) / mean(baseline); its spread as
(a) per-repeat ratios compared_k / baseline_k (the runs alternate, so repeat k of both
ran back to back), with their std, min and max; (b) first-order propagated std,
ratio * sqrt((s_b / m_b)^2 + (s_c / m_c)^2); (c) the extreme range
min(compared) / max(baseline) .. max(compared) / min(baseline); (d) a 95% confidence
interval of the ratio of means by paired bootstrap over repeats (`bootstrap_ratio_ci`):
BCa through `scipy.stats.bootstrap` for new sets, the exact percentile bootstrap for sets
that recorded no method (they were made with it; see docs/statistics.md).
Weak-scaling efficiency = ratio / (ranks_compared / ranks_baseline).

Each run's measurement window (seconds and events of the last-50% window) is in the
per-run rows; a window shorter than `SHORT_WINDOW_S` is flagged.
"""

from __future__ import annotations

import math
import statistics
import warnings

import numpy as np
import pandas as pd
from scipy import stats

FIGURE = "steady_env_steps_per_s"
SHORT_WINDOW_S = 30.0
CI_LEVEL = 0.95
EXACT_BOOTSTRAP_MAX_N = 6      # n^n resamples: 46,656 at n = 6
# Drawn resamples: BCa's, and the percentile method's beyond EXACT_BOOTSTRAP_MAX_N (legacy
# RandomState there: a stream numpy keeps stable, so the committed intervals recompute)
BOOTSTRAP_RESAMPLES = 100_000
BOOTSTRAP_SEED = 0
PERCENTILE = "percentile"
BCA = "bca"
DEFAULT_CI_METHOD = BCA
BCA_MIN_REPEATS = 3  # the jackknife behind BCa's acceleration means little over two repeats
CI_METHODS = {
    PERCENTILE: (
        "paired bootstrap over repeats: resample the repeats (pairs of baseline and compared runs of the "
        "same repeat) with replacement, ratio of the resample's means; 95% = the 2.5% and 97.5% quantiles "
        "(linear interpolation). Exact (all n^n resamples) for n <= 6 repeats, else 100,000 resamples "
        "from numpy RandomState(0). Needs >= 2 paired repeats."
    ),
    BCA: (
        "paired bootstrap over repeats, bias-corrected and accelerated (BCa, scipy.stats.bootstrap with "
        "paired=True): resample the repeats (pairs of baseline and compared runs of the same repeat) with "
        "replacement, ratio of the resample's means; 100,000 resamples from numpy default_rng(0). Where "
        "BCa is undefined (fewer than 3 paired repeats, or resamples that do not vary) the percentile "
        "interval is given instead and ci_fallback says why. Needs >= 2 paired repeats."
    ),
}
# The method of a set whose summary records none: every set made before BCa was the default.
RECORDED_BEFORE_BCA = PERCENTILE


ROW_COLUMNS = [
    "run",
    "config",
    "repeat",
    "devices",
    "world_size",
    "steady_env_steps_per_s",
    "tail_mean_total_fps",
    "total_env_steps",
    "iterations",
    "wall_time_s",
    "event_span_s",
    "final_episode_return",
    "final_episode_length",
    "exit_status",
    "window_s",
    "window_events",
    "short_window",
]


def _row(m: dict) -> dict:
    """A run's row: its own fields plus its measurement window."""
    window = m.get("window") if isinstance(m.get("window"), dict) else {}
    seconds = window.get("seconds")
    derived = {
        "window_s": seconds,
        "window_events": window.get("window_events"),
        "short_window": None if seconds is None else bool(seconds < SHORT_WINDOW_S),
    }
    return {col: derived[col] if col in derived else m.get(col) for col in ROW_COLUMNS}


def runs_table(metrics: list[dict]) -> pd.DataFrame:
    """One row per run, in the order given (the execution order)."""
    rows = [_row(m) for m in metrics]
    return pd.DataFrame(rows, columns=ROW_COLUMNS)


def describe(values: list[float]) -> dict:
    n = len(values)
    return {
        "n": n,
        "mean": statistics.fmean(values) if n else None,
        "std": statistics.stdev(values) if n > 1 else (0.0 if n == 1 else None),
        "min": min(values) if n else None,
        "max": max(values) if n else None,
        "values": list(values),
    }


def config_stats(metrics: list[dict], order: list[str], figure: str = FIGURE) -> dict[str, dict]:
    """`{config: describe(...) + repeats/devices/world_size}` in `order` (then any others)."""
    names = list(order) + sorted({m["config"] for m in metrics} - set(order))
    out = {}
    for name in names:
        runs = sorted((m for m in metrics if m["config"] == name), key=lambda m: m.get("repeat") or 0)
        if not runs:
            continue
        stats = describe([float(m[figure]) for m in runs if m.get(figure) is not None])
        stats.update(
            repeats=[m.get("repeat") for m in runs],
            runs=[m["run"] for m in runs],
            devices=runs[0].get("devices"),
            world_size=runs[0].get("world_size"),
            tail_mean_total_fps=describe([float(m["tail_mean_total_fps"]) for m in runs
                                          if m.get("tail_mean_total_fps") is not None]),
            time_to_quality=quality_stats(runs),
        )
        out[name] = stats
    return out


def quality_stats(runs: list[dict]) -> dict:
    """Per learning-quality threshold (the runs' `time_to_quality`): how many repeats
    reached it, and the env steps and seconds at which they did (runs that did not reach
    it are counted in `of`, not in the statistics)."""
    names = sorted({name for m in runs for name in (m.get("time_to_quality") or {})})
    out = {}
    for name in names:
        reached = [m["time_to_quality"][name] for m in runs if (m.get("time_to_quality") or {}).get(name)]
        out[name] = {
            "reached": len(reached),
            "of": len(runs),
            "threshold": reached[0]["threshold"] if reached else None,
            "env_steps": describe([float(r["env_steps"]) for r in reached]),
            "seconds": describe([float(r["seconds"]) for r in reached]),
        }
    return out


def phase_by_rank(metrics: list[dict]) -> list[dict]:
    """Per-phase ms per iteration of every rank of every traced configuration, averaged over
    its repeats: `[{config, rank, runs, phase_ms: {phase: mean}}]`, configurations in the
    order they first appear in `metrics`, then by rank. A phase's mean is over the runs
    that logged it. Metrics written before ranks[] had phase_ms fall back to the top-level
    phase_ms for rank 0. Empty when no run was traced."""
    groups: dict[tuple[str, int], list[dict]] = {}
    for m in metrics:
        ranks = {r["rank"]: r.get("phase_ms") for r in m.get("ranks", [])}
        if not any(ranks.values()) and m.get("phase_ms"):
            ranks = {0: m["phase_ms"]}
        for rank, phases in ranks.items():
            if phases:
                groups.setdefault((m.get("config") or m["run"], rank), []).append(phases)
    configs = list(dict.fromkeys(config for config, _ in groups))
    rows = []
    for config, rank in sorted(groups, key=lambda k: (configs.index(k[0]), k[1])):
        runs = groups[config, rank]
        names = sorted({p for phases in runs for p, v in phases.items() if v is not None})
        rows.append({
            "config": config,
            "rank": rank,
            "runs": len(runs),
            "phase_ms": {p: statistics.fmean(r[p] for r in runs if r.get(p) is not None) for p in names},
        })
    return rows


def default_pairs(order: list[str], world_sizes: dict[str, int]) -> tuple[list[tuple[str, str]], str]:
    """Pairs to compare and a sentence saying how they were chosen.

    Each multi-rank configuration is compared with the nearest single-rank one before it in
    `order` (else the first single-rank one). With no multi-rank configuration, each
    configuration is compared with the first one listed.
    """
    singles = [c for c in order if world_sizes.get(c, 1) == 1]
    multis = [c for c in order if world_sizes.get(c, 1) > 1]
    if multis and singles:
        pairs = []
        for c in multis:
            before = [s for s in singles if order.index(s) < order.index(c)]
            pairs.append((before[-1] if before else singles[0], c))
        return pairs, "each multi-rank configuration against the nearest single-rank configuration listed before it"
    if len(order) >= 2:
        return (
            [(order[0], c) for c in order[1:]],
            ("no multi-rank configuration in this run set: configurations are compared as listed, "
             f"each against the first ({order[0]}); the ratio is not a GPU-scaling figure"),
        )
    return [], "only one configuration: nothing to compare"


def bootstrap_ratio_ci(base: list[float], other: list[float], level: float = CI_LEVEL,
                       method: str = DEFAULT_CI_METHOD) -> list[float] | None:
    """[low, high] of mean(other) / mean(base) under a paired bootstrap over repeats
    (base[k] and other[k] ran in the same repeat); None with fewer than 2 pairs.
    Deterministic, so verification recomputes it exactly."""
    return ratio_interval(base, other, level, method)[0]


def ratio_interval(base: list[float], other: list[float], level: float = CI_LEVEL,
                   method: str = DEFAULT_CI_METHOD) -> tuple[list[float] | None, str | None]:
    """(interval, why BCa fell back to the percentile method, or None); see bootstrap_ratio_ci."""
    if method not in CI_METHODS:
        raise ValueError(f"unknown interval method {method!r} (known: {sorted(CI_METHODS)})")
    n = len(base)
    if n < 2 or n != len(other):
        return None, None
    b, c = np.asarray(base, dtype=np.float64), np.asarray(other, dtype=np.float64)
    if method == PERCENTILE:
        return _percentile_interval(b, c, level), None
    if n < BCA_MIN_REPEATS:
        return _percentile_interval(b, c, level), f"BCa needs >= {BCA_MIN_REPEATS} paired repeats, {n} given"
    interval = _bca_interval(b, c, level)
    if interval is None:
        return _percentile_interval(b, c, level), "BCa undefined: the resampled ratios do not vary enough"
    return interval, None


def _percentile_interval(b: np.ndarray, c: np.ndarray, level: float) -> list[float]:
    """The percentile interval over every resample (n <= 6) or a seeded draw of them. Kept by
    hand, not scipy's: the committed sets recorded these exact values and verification
    recomputes them to float noise, which a Monte Carlo percentile interval cannot."""
    n = len(b)
    if n <= EXACT_BOOTSTRAP_MAX_N:
        idx = np.stack(np.unravel_index(np.arange(n**n), (n,) * n), axis=1)
    else:
        idx = np.random.RandomState(BOOTSTRAP_SEED).randint(0, n, size=(BOOTSTRAP_RESAMPLES, n))
    ratios = c[idx].mean(axis=1) / b[idx].mean(axis=1)
    tail = (1.0 - level) / 2
    low, high = np.quantile(ratios, [tail, 1.0 - tail])
    return [float(low), float(high)]


def _ratio_of_means(b: np.ndarray, c: np.ndarray, axis: int = -1) -> np.ndarray:
    return c.mean(axis=axis) / b.mean(axis=axis)


def _bca_interval(b: np.ndarray, c: np.ndarray, level: float) -> list[float] | None:
    """scipy's paired BCa interval, or None where it is undefined (scipy then warns and
    answers NaN: resamples that all equal the observed ratio, or a degenerate jackknife)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        res = stats.bootstrap((b, c), _ratio_of_means, paired=True, vectorized=True, confidence_level=level,
                              n_resamples=BOOTSTRAP_RESAMPLES, method="BCa",
                              rng=np.random.default_rng(BOOTSTRAP_SEED))
    low, high = res.confidence_interval
    if not (np.isfinite(low) and np.isfinite(high)):
        return None
    return [float(low), float(high)]


def recorded_ci_method(summary: dict) -> str:
    """The interval method a stored summary was made with (percentile when it records none)."""
    return summary.get("ci_bootstrap") or RECORDED_BEFORE_BCA


def compare(base: dict, other: dict, ci_method: str = DEFAULT_CI_METHOD) -> dict:
    mb, mc = base["mean"], other["mean"]
    out = {"ratio_of_means": None}
    if not mb or mc is None:
        return out
    ratio = mc / mb
    out["ratio_of_means"] = ratio
    sb, sc = base.get("std") or 0.0, other.get("std") or 0.0
    out["ratio_std_propagated"] = ratio * math.sqrt((sb / mb) ** 2 + ((sc / mc) ** 2 if mc else 0.0))
    out["ratio_range"] = [min(other["values"]) / max(base["values"]), max(other["values"]) / min(base["values"])]
    by_repeat_b = dict(zip(base["repeats"], base["values"]))
    by_repeat_c = dict(zip(other["repeats"], other["values"]))
    common = sorted(set(by_repeat_b) & set(by_repeat_c), key=lambda r: (r is None, r))
    per_repeat = {str(r): by_repeat_c[r] / by_repeat_b[r] for r in common if by_repeat_b[r]}
    out["per_repeat_ratios"] = per_repeat
    out["per_repeat_ratio_stats"] = describe(list(per_repeat.values()))
    paired = [r for r in common if by_repeat_b[r]]
    interval, fallback = ratio_interval([by_repeat_b[r] for r in paired], [by_repeat_c[r] for r in paired],
                                        method=ci_method)
    out["ratio_ci95"] = interval
    out["ci_repeats"] = len(paired)
    out["ci_method"] = CI_METHODS[ci_method]
    if ci_method != RECORDED_BEFORE_BCA:  # sets made before BCa recorded no fallback
        out["ci_fallback"] = fallback
    wb, wc = base.get("world_size") or 1, other.get("world_size") or 1
    out["rank_multiple"] = wc / wb
    out["weak_scaling_efficiency"] = ratio / (wc / wb) if wc != wb else None
    return out


def _check_order_and_pairs(order: list[str], pairs: list[tuple[str, str]]) -> None:
    """A configuration listed twice in the order, or a comparison of a configuration with
    itself or given twice, as the plan refuses them: the summary showed the row or the
    comparison twice, or a ratio of 1.000x that compares nothing (ValueError)."""
    twice = next((c for i, c in enumerate(order) if c in order[:i]), None)
    if twice is not None:
        raise ValueError(f"order: {twice!r} is listed twice")
    for i, (base, other) in enumerate(pairs):
        if base == other:
            raise ValueError(f"pairs: {base!r} compared with itself; a pair names two configurations")
        if (base, other) in pairs[:i]:
            raise ValueError(f"pairs: {base}:{other} is given twice")


def summarize(
    metrics: list[dict],
    order: list[str],
    pairs: list[tuple[str, str]] | None = None,
    meta: dict | None = None,
    ci_method: str = DEFAULT_CI_METHOD,
) -> dict:
    """The summary.json document: per-configuration stats, comparisons, runs. `ci_method`:
    the intervals' bootstrap (recorded as ci_bootstrap; a set that records none used the
    percentile method, and verification recomputes it so: `recorded_ci_method`)."""
    _check_order_and_pairs(list(order), list(pairs or []))
    stats = config_stats(metrics, order)
    if pairs:
        how = "pairs given by the configuration"
    else:
        pairs, how = default_pairs(order, {c: s.get("world_size") or 1 for c, s in stats.items()})
    comparisons = []
    for base, other in pairs:
        missing = [c for c in (base, other) if c not in stats]
        if missing:
            raise ValueError(f"pairs: no runs of configuration(s) {missing} among the metrics given")
        comparisons.append({"baseline": base, "compared": other, **compare(stats[base], stats[other], ci_method)})
    recorded = {} if ci_method == RECORDED_BEFORE_BCA else {"ci_bootstrap": ci_method}
    return {
        "figure": FIGURE,
        **recorded,
        "meta": meta or {},
        "order": list(order),
        "configs": stats,
        "pairing": how,
        "comparisons": comparisons,
        "runs": [_row(m) for m in metrics],
        "short_windows": [m["run"] for m in metrics if _row(m)["short_window"]],
        "short_window_s": SHORT_WINDOW_S,
    }
