"""Each figure of a summary.json held to the figures aggregate makes it from (see
sacscale.analysis.aggregate): a statistic to its values, a comparison's range, per-repeat
ratios, spread and rank multiple to its configurations' values, means and world sizes, its
ratio and interval to its range. A hand-edited summary whose figures disagree was drawn as
written; where the report reads one, the first disagreement is named by its key path."""

from __future__ import annotations

import math
import statistics

# how far a stored figure may differ from the one made from its sources (relative): aggregate
# writes each unrounded, so float rounding only
ROUNDING = 1e-9


def _close(stored: float, made: float) -> bool:
    return math.isclose(stored, made, rel_tol=ROUNDING, abs_tol=ROUNDING)


def _within(value: float, pair: list, slack_of: float = ROUNDING) -> bool:
    slack = slack_of * max(abs(pair[0]), abs(pair[1]), 1.0)
    return pair[0] - slack <= value <= pair[1] + slack


def negative_figure_problem(stats: dict | None, where: str) -> str | None:
    """The first negative figure of a configuration's statistics: rates (env steps per second),
    env steps and seconds are 0 or more, so a negative one is an edit or a fault."""
    stats = stats or {}
    named = [(f"{where}.{key}", stats.get(key)) for key in ("mean", "min", "max")]
    named += [(f"{where}.values[{j}]", value) for j, value in enumerate(stats.get("values") or [])]
    for at, value in named:
        if value is not None and value < 0:
            return f"{at} {value}: negative, where a rate, a count of env steps or a time is 0 or more"
    return None


def stats_values_problem(stats: dict, where: str) -> str | None:
    """Where a statistic is not the one of its own values (aggregate's `describe`)."""
    values = stats.get("values")
    if not values:
        return None
    made = {"mean": statistics.fmean(values), "min": min(values), "max": max(values),
            "std": statistics.stdev(values) if len(values) > 1 else 0.0}
    for key, expected in made.items():
        if stats.get(key) is not None and not _close(stats[key], expected):
            return f"{where}.{key} {stats[key]}, while the {key} of {where}.values is {expected:.6g}"
    return None


def comparison_figures_problem(i: int, comparison: dict, configs: dict) -> str | None:
    """Where a comparison's figures disagree with each other or with its configurations'."""
    where = f"comparisons[{i}]"
    names = [comparison.get(key) for key in ("baseline", "compared")]
    base, other = ((configs.get(name) or {}) if isinstance(name, str) else {} for name in names)
    checks = (_range_holds, _range_of_values, _repeats_agree, _repeats_of_values, _spread_of_means,
              _ranks_of_world_sizes)
    return next(filter(None, (check(comparison, base, other, where) for check in checks)), None)


def _range_holds(comparison: dict, base: dict, other: dict, where: str) -> str | None:
    """ratio_range is min(compared) / max(baseline) .. max(compared) / min(baseline): every ratio
    of a mean of compared values over a mean of baseline values lies in it, the ratio of means
    and each resample behind the bootstrap interval alike (so the interval does too, BCa's
    included, though that need not hold the ratio of means itself)."""
    bounds = comparison.get("ratio_range")
    if bounds is None:
        return None
    ratio = comparison.get("ratio_of_means")
    if ratio is not None and not _within(ratio, bounds):
        return (f"{where}.ratio_of_means {ratio:.6g}, outside {where}.ratio_range {bounds}, the range every ratio "
                "of the configurations' means lies in")
    interval = comparison.get("ratio_ci95")
    if interval is not None and not all(_within(end, bounds) for end in interval):
        return (f"{where}.ratio_ci95 {interval}, not within {where}.ratio_range {bounds}, the range every "
                "resampled ratio of means lies in")
    return None


def _range_of_values(comparison: dict, base: dict, other: dict, where: str) -> str | None:
    bounds, low_values, high_values = comparison.get("ratio_range"), base.get("values"), other.get("values")
    if bounds is None or not low_values or not high_values or min(low_values) <= 0:
        return None
    made = [min(high_values) / max(low_values), max(high_values) / min(low_values)]
    if not all(_close(stored, expected) for stored, expected in zip(bounds, made)):
        return (f"{where}.ratio_range {bounds}, while its configurations' values give "
                f"[{made[0]:.6g}, {made[1]:.6g}] (min compared / max baseline, max compared / min baseline)")
    return None


def _repeats_agree(comparison: dict, base: dict, other: dict, where: str) -> str | None:
    """per_repeat_ratio_stats describe per_repeat_ratios, and ci_repeats counts them."""
    ratios = comparison.get("per_repeat_ratios")
    if ratios is None:
        return None
    values = (comparison.get("per_repeat_ratio_stats") or {}).get("values")
    if values is not None and (len(values) != len(ratios)
                               or not all(map(_close, values, ratios.values()))):
        return (f"{where}.per_repeat_ratio_stats.values {values}, while {where}.per_repeat_ratios holds "
                f"{list(ratios.values())}; the statistics describe those ratios")
    counted = comparison.get("ci_repeats")
    if counted is not None and counted != len(ratios):
        return f"{where}.ci_repeats {counted}, while {where}.per_repeat_ratios holds {len(ratios)} paired repeat(s)"
    return None


def _by_repeat(config: dict) -> dict[str, float] | None:
    repeats, values = config.get("repeats"), config.get("values")
    if repeats is None or values is None or len(repeats) != len(values):
        return None
    return {str(repeat): value for repeat, value in zip(repeats, values)}


def _repeats_of_values(comparison: dict, base: dict, other: dict, where: str) -> str | None:
    """Each per-repeat ratio is the compared run's value over the baseline's of that repeat."""
    ratios, low, high = comparison.get("per_repeat_ratios"), _by_repeat(base), _by_repeat(other)
    if ratios is None or low is None or high is None:
        return None
    made = {repeat: high[repeat] / low[repeat] for repeat in low if repeat in high and low[repeat]}
    for repeat in sorted(set(ratios) | set(made)):
        stored, expected = ratios.get(repeat), made.get(repeat)
        if stored is None or expected is None or not _close(stored, expected):
            shown = "none" if expected is None else f"{expected:.6g}"
            return (f"{where}.per_repeat_ratios[{repeat[:40]!r}] {stored}, while its configurations' values of "
                    f"that repeat give {shown}")
    return None


def _spread_of_means(comparison: dict, base: dict, other: dict, where: str) -> str | None:
    """ratio_std_propagated = ratio * sqrt((s_b / m_b)^2 + (s_c / m_c)^2), from the means and stds."""
    spread, ratio = comparison.get("ratio_std_propagated"), comparison.get("ratio_of_means")
    means = base.get("mean"), other.get("mean")
    if spread is None or ratio is None or None in means or not means[0]:
        return None
    sb, sc = base.get("std") or 0.0, other.get("std") or 0.0
    made = ratio * math.sqrt((sb / means[0]) ** 2 + ((sc / means[1]) ** 2 if means[1] else 0.0))
    if not _close(spread, made):
        return (f"{where}.ratio_std_propagated {spread}, while its ratio and its configurations' means and stds "
                f"give {made:.6g}")
    return None


def _ranks_of_world_sizes(comparison: dict, base: dict, other: dict, where: str) -> str | None:
    """rank_multiple is the compared world size over the baseline's (1 where none is recorded),
    weak_scaling_efficiency the ratio over it."""
    multiple, efficiency = comparison.get("rank_multiple"), comparison.get("weak_scaling_efficiency")
    if multiple is not None and base and other:
        sizes = base.get("world_size") or 1, other.get("world_size") or 1
        if not _close(multiple, sizes[1] / sizes[0]):
            return (f"{where}.rank_multiple {multiple}, while its configurations' world sizes are {sizes[0]} "
                    f"and {sizes[1]} (a multiple of {sizes[1] / sizes[0]:.6g})")
    ratio = comparison.get("ratio_of_means")
    if None not in (efficiency, multiple, ratio) and multiple > 0 and not _close(efficiency, ratio / multiple):
        return (f"{where}.weak_scaling_efficiency {efficiency}, while {where}.ratio_of_means / "
                f"{where}.rank_multiple is {ratio / multiple:.6g}")
    return None
