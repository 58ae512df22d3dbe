"""The records' shapes: every field of analyze-run's output (metrics/<run>.json) and of
summary.json that the summary, the table and the report read, with its type. In a module of
its own so that aggregate and report check their inputs before loading pandas and scipy."""

from __future__ import annotations

import math

from sacscale.analysis.summary_figures import (
    comparison_figures_problem,
    negative_figure_problem,
    stats_values_problem,
)
from sacscale.shapes import NUMBER, Maybe, Whole

# the most repeats a plan holds (the config schema's and planning's bound, which take it from here)
MAX_REPEATS = 1000

# how far a stored ratio of means may differ from its configurations' means' quotient (relative)
RATIO_ROUNDING = 1e-9

# every field of analyze-run's output that the summary, the table and the report read, of its
# type: a repeat as a string, a world size of 1.5 or ranks as an object went into summary.json
# as written, or ended in a TypeError naming no file
SERIES = ("total_env_steps", "total_fps", "episode_return", "episode_length")
REPEAT = Whole(1, MAX_REPEATS, "a repeat of a plan")
_PHASES = Maybe({str: Maybe(NUMBER)})
_REACHED = Maybe({"threshold": NUMBER, "env_steps": NUMBER, "seconds": NUMBER})
METRICS_SHAPE = {
    "run": str, "config": str, "repeat": Maybe(REPEAT), "devices": Maybe(str), "world_size": Maybe(int),
    **{key: Maybe(NUMBER) for key in ("steady_env_steps_per_s", "tail_mean_total_fps", "total_env_steps",
                                      "wall_time_s", "event_span_s", "final_episode_return", "final_episode_length")},
    "iterations": Maybe(int), "exit_status": Maybe(int),
    "window": Maybe({"seconds": Maybe(NUMBER), "window_events": Maybe(int)}),
    "ranks": Maybe([{"rank": int, "phase_ms": _PHASES}]), "phase_ms": _PHASES,
    "time_to_quality": Maybe({str: _REACHED}),
    "series": Maybe({"columns": Maybe([str]), **{key: Maybe([[Maybe(NUMBER)]]) for key in SERIES}}),
    "final_tracking": Maybe({str: Maybe(NUMBER)}),
}

_SUMMARY_STATS = {"n": Maybe(int), "mean": Maybe(NUMBER), "std": Maybe(NUMBER), "min": Maybe(NUMBER),
                  "max": Maybe(NUMBER), "values": Maybe([NUMBER])}
_REACHED_ACROSS_REPEATS = {"reached": Maybe(int), "of": Maybe(int), "threshold": Maybe(NUMBER),
                           "env_steps": Maybe(_SUMMARY_STATS), "seconds": Maybe(_SUMMARY_STATS)}
_CONFIG = {**_SUMMARY_STATS, "devices": Maybe(str), "world_size": Maybe(int),
           "time_to_quality": Maybe({str: Maybe(_REACHED_ACROSS_REPEATS)}),
           "runs": Maybe([str]), "repeats": Maybe([Maybe(REPEAT)]), "tail_mean_total_fps": Maybe(_SUMMARY_STATS)}
_COMPARISON = {"baseline": str, "compared": str, "ratio_of_means": Maybe(NUMBER),
               "ratio_std_propagated": Maybe(NUMBER), "ratio_range": Maybe([NUMBER]),
               "per_repeat_ratios": Maybe({str: NUMBER}),
               "per_repeat_ratio_stats": Maybe(_SUMMARY_STATS), "ratio_ci95": Maybe([NUMBER]), "ci_repeats": Maybe(int),
               "ci_method": Maybe(str), "ci_fallback": Maybe(str), "rank_multiple": Maybe(NUMBER),
               "weak_scaling_efficiency": Maybe(NUMBER)}
# every field of summary.json that the report reads, of its type (a count as a string ended
# the report in a TypeError naming no file)
SUMMARY_SHAPE = {"configs": {str: _CONFIG}, "comparisons": Maybe([_COMPARISON]), "order": Maybe([str]),
                 "pairing": Maybe(str), "meta": Maybe(dict), "short_windows": Maybe([str]),
                 "phase_by_rank": Maybe([{"config": str, "rank": int, "phase_ms": {str: NUMBER}}])}


def _unknown(name, configs: dict) -> bool:
    return isinstance(name, str) and name not in configs


def _stats_problem(stats: dict | None, where: str) -> str | None:
    """Where statistics of _SUMMARY_STATS disagree with their own values: `n` counts the
    values, and a count above 0 has a mean, a min and a max (the report plots and prints them)."""
    if not stats:
        return None
    values = stats.get("values")
    if values is not None and stats.get("n") is not None and stats["n"] != len(values):
        return f"{where}.n {stats['n']}, while {where}.values holds {len(values)} value(s)"
    if stats.get("n"):
        for key in ("mean", "min", "max"):
            if stats.get(key) is None:
                return f"{where}.n {stats['n']} with no {where}.{key}"
    return _order_problem(stats, where) or stats_values_problem(stats, where)


def _order_problem(stats: dict, where: str) -> str | None:
    """Where statistics break their own order: a negative std (the report draws it as an
    error bar), a min above the max, a mean outside them (beyond rounding)."""
    std, low, mean, high = (stats.get(key) for key in ("std", "min", "mean", "max"))
    if std is not None and std < 0:
        return f"{where}.std {std}: negative, where a standard deviation is 0 or more"
    if low is not None and high is not None and low > high:
        return f"{where}.min {low} above {where}.max {high}"
    if None not in (low, mean, high):
        slack = 1e-9 * max(abs(low), abs(high), 1.0)  # a mean of equal values may round past them
        if not low - slack <= mean <= high + slack:
            return f"{where}.mean {mean} outside {where}.min {low} and {where}.max {high}"
    return None


def _config_problem(name: str, config: dict) -> str | None:
    """Where one configuration's parallel lists differ in length: `repeats` and `runs` name
    each run, `values` holds each run's figure (plotted against its repeat); or its statistics
    disagree with their values, or a rate, env step count or time is negative."""
    where = f"configs[{name[:40]!r}]"
    lengths = {key: len(config[key]) for key in ("repeats", "runs", "values") if config.get(key) is not None}
    if len(set(lengths.values())) > 1:
        listed = ", ".join(f"{key} {count}" for key, count in lengths.items())
        return f"{where}: its lists differ in length ({listed}), one entry per run each"
    nested = [(config, where), (config.get("tail_mean_total_fps"), f"{where}.tail_mean_total_fps")]
    for threshold, reached in (config.get("time_to_quality") or {}).items():
        for key in ("env_steps", "seconds"):
            nested.append(((reached or {}).get(key), f"{where}.time_to_quality[{threshold[:40]!r}].{key}"))
    problems = (_stats_problem(stats, at) or negative_figure_problem(stats, at) for stats, at in nested)
    return next(filter(None, problems), None)


def _comparison_problem(i: int, comparison: dict, configs: dict) -> str | None:
    """Where a comparison's interval or range is not a pair, a ratio is negative or is not the
    ratio of its configurations' means, its per-repeat statistics disagree, or another of its
    figures is not the one made from those it is made from (summary_figures)."""
    for key in ("ratio_ci95", "ratio_range"):
        if comparison.get(key) is not None and len(comparison[key]) != 2:
            return f"comparisons[{i}].{key} holds {len(comparison[key])} value(s), not a pair (low, high)"
        if comparison.get(key) is not None and comparison[key][0] > comparison[key][1]:
            return f"comparisons[{i}].{key} {comparison[key]}: its low above its high, not a (low, high) pair"
    return (_negative_ratio(comparison, f"comparisons[{i}]")
            or _ratio_not_of_means(comparison, configs, f"comparisons[{i}]")
            or _stats_problem(comparison.get("per_repeat_ratio_stats"), f"comparisons[{i}].per_repeat_ratio_stats")
            or comparison_figures_problem(i, comparison, configs))


def _ratio_figures(comparison: dict, where: str) -> list[tuple[str, object]]:
    """(key path, value) of every ratio a comparison holds: of two rates, or of two rank counts."""
    named = [(f"{where}.{key}", comparison.get(key)) for key in ("ratio_of_means", "rank_multiple",
                                                                 "weak_scaling_efficiency")]
    for key in ("ratio_range", "ratio_ci95"):
        named += [(f"{where}.{key}[{j}]", value) for j, value in enumerate(comparison.get(key) or [])]
    named += [(f"{where}.per_repeat_ratios[{repeat[:40]!r}]", value)
              for repeat, value in (comparison.get("per_repeat_ratios") or {}).items()]
    stats, at = comparison.get("per_repeat_ratio_stats") or {}, f"{where}.per_repeat_ratio_stats"
    named += [(f"{at}.{key}", stats.get(key)) for key in ("mean", "min", "max")]
    return named + [(f"{at}.values[{j}]", value) for j, value in enumerate(stats.get("values") or [])]


def _negative_ratio(comparison: dict, where: str) -> str | None:
    """The first negative ratio: the rates (env steps per second) and rank counts compared are
    0 or more, so a negative ratio, drawn as a speed-up below zero, is an edit or a fault."""
    for at, value in _ratio_figures(comparison, where):
        if value is not None and value < 0:
            return f"{at} {value}: negative, where a ratio of rates or of rank counts is 0 or more"
    spread = comparison.get("ratio_std_propagated")
    if spread is not None and spread < 0:
        return f"{where}.ratio_std_propagated {spread}: negative, where a standard deviation is 0 or more"
    return None


def _ratio_not_of_means(comparison: dict, configs: dict, where: str) -> str | None:
    """Where ratio_of_means is not the compared configuration's mean over the baseline's (both
    in the file; aggregate writes the quotient unrounded, so beyond float rounding only)."""
    ratio = comparison.get("ratio_of_means")
    names = [comparison.get(key) for key in ("baseline", "compared")]
    means = [(configs.get(name) or {}).get("mean") for name in names]
    if ratio is None or None in means:
        return None
    base, other = (f"configs[{name[:40]!r}].mean" for name in names)
    if means[0] == 0:
        return f"{where}.ratio_of_means {ratio}, while {base} is 0 (a ratio over 0 is none)"
    expected = means[1] / means[0]
    if not math.isclose(ratio, expected, rel_tol=RATIO_ROUNDING, abs_tol=RATIO_ROUNDING):
        return f"{where}.ratio_of_means {ratio}, while {other} / {base} is {expected:.6g}"
    return None


def _not_finite(value, where: str) -> str | None:
    """The key path of the first NaN or infinity in `value` (json reads the NaN and Infinity
    tokens, and every comparison with NaN is false, so no order check catches it), or None."""
    if isinstance(value, float) and not math.isfinite(value):
        return f"{where} {value}: not a finite number"
    if isinstance(value, dict):
        parts = ((f"{where}.{key}" if key.isidentifier() else f"{where}[{key[:40]!r}]", item)
                 for key, item in value.items())
    elif isinstance(value, list):
        parts = ((f"{where}[{i}]", item) for i, item in enumerate(value))
    else:
        return None
    return next(filter(None, (_not_finite(item, at) for at, item in parts)), None)


def summary_consistency_problem(summary: dict) -> str | None:
    """Where a summary.json of SUMMARY_SHAPE contradicts itself in a way the report would
    trip over (lists plotted against each other of different lengths, a number not finite):
    its key path, or None."""
    configs = ((f"configs[{name[:40]!r}]", config) for name, config in summary["configs"].items())
    comparisons = ((f"comparisons[{i}]", c) for i, c in enumerate(summary.get("comparisons") or []))
    problem = next(filter(None, (_not_finite(value, at) for at, value in (*configs, *comparisons))), None)
    if problem:
        return problem
    for name, config in summary["configs"].items():
        problem = _config_problem(name, config)
        if problem:
            return problem
    comparisons = enumerate(summary.get("comparisons") or [])
    return next(filter(None, (_comparison_problem(i, c, summary["configs"]) for i, c in comparisons)), None)


def summary_reference_problem(summary: dict) -> str | None:
    """Where a summary.json of SUMMARY_SHAPE names a configuration its `configs` lacks (the
    report looks each one up there): its key path and the name, or None."""
    configs = summary["configs"]
    for i, comparison in enumerate(summary.get("comparisons") or []):
        for key in ("baseline", "compared"):
            if _unknown(comparison[key], configs):
                return f"comparisons[{i}].{key} {comparison[key][:40]!r}: not a configuration of its configs"
    for key, names in (("order", summary.get("order") or []),
                       ("phase_by_rank", [row["config"] for row in summary.get("phase_by_rank") or []])):
        for i, name in enumerate(names):
            if _unknown(name, configs):
                where = f"{key}[{i}]" + (".config" if key == "phase_by_rank" else "")
                return f"{where} {name[:40]!r}: not a configuration of its configs"
    return None
