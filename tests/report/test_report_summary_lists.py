"""A summary.json whose configuration's parallel lists differ in length (repeats 7 against
values 3, values cut to 2, repeats empty) ended the report in matplotlib's `ValueError: x and
y must have same first dimension` (exit 1), naming no file. The lists (and the statistics
against their values, and the interval pairs) are checked where summary.json is read: one
line naming the file and the key, exit 2, nothing written."""

import statistics
import sys
from pathlib import Path

import pytest

from sacscale.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "evidence"))
from set_copies import copy_committed_set, edit_record  # noqa: E402

SET = "h200x1_shared_short"
POOL = "configs['n1_pool7']"


def _config(key, value):
    return lambda summary: summary["configs"]["n1_pool7"].update({key: value})


def _cut(key, count):
    return lambda summary: summary["configs"]["n1_pool7"].update(
        {key: summary["configs"]["n1_pool7"][key][:count]})


def _comparison(key, value):
    return lambda summary: summary["comparisons"][0].update({key: value})


def _negated(summary):
    """Both configurations' rates below zero, their ratio (and so every ratio) unchanged."""
    for config in summary["configs"].values():
        config.update(mean=-config["mean"], min=-config["max"], max=-config["min"],
                      values=[-value for value in config["values"]])


def _per_repeat(ratios):
    """Per-repeat ratios and their statistics changed together, agreeing with each other."""
    def edit(summary):
        values = list(ratios.values())
        summary["comparisons"][0]["per_repeat_ratios"] = ratios
        summary["comparisons"][0]["per_repeat_ratio_stats"].update(
            mean=statistics.fmean(values), std=statistics.stdev(values), min=min(values), max=max(values),
            values=values)
    return edit


_EDITS = {
    "repeats_longer": (_config("repeats", list(range(1, 8))),
                       f"{POOL}: its lists differ in length (repeats 7, runs 2, values 2), one entry per run each"),
    "values_cut": (_cut("values", 1),
                   f"{POOL}: its lists differ in length (repeats 2, runs 2, values 1), one entry per run each"),
    "repeats_empty": (_config("repeats", []),
                      f"{POOL}: its lists differ in length (repeats 0, runs 2, values 2), one entry per run each"),
    "runs_cut": (_cut("runs", 1),
                 f"{POOL}: its lists differ in length (repeats 2, runs 1, values 2), one entry per run each"),
    "n_counts_other": (_config("n", 5), f"{POOL}.n 5, while {POOL}.values holds 2 value(s)"),
    "no_max": (_config("max", None), f"{POOL}.n 2 with no {POOL}.max"),
    "interval_of_one": (_comparison("ratio_ci95", [1.0]),
                        "comparisons[0].ratio_ci95 holds 1 value(s), not a pair (low, high)"),
    "range_of_three": (_comparison("ratio_range", [1.0, 2.0, 3.0]),
                       "comparisons[0].ratio_range holds 3 value(s), not a pair (low, high)"),
    # signs and orders: a negative std ended the report in matplotlib's `'yerr' must not contain
    # negative values`, exit 1, naming no file
    "std_negative": (_config("std", -5.0), f"{POOL}.std -5.0: negative, where a standard deviation is 0 or more"),
    "min_above_max": (_config("min", 1e12), f"{POOL}.min 1000000000000.0 above {POOL}.max "),
    "mean_above_max": (_config("mean", 1e12), f"{POOL}.mean 1000000000000.0 outside {POOL}.min "),
    "interval_reversed": (_comparison("ratio_ci95", [2.0, 1.0]),
                          "comparisons[0].ratio_ci95 [2.0, 1.0]: its low above its high, not a (low, high) pair"),
    # NaN and infinities (json writes and reads their tokens) pass every order check and ended
    # the report in matplotlib's `Axis limits cannot be NaN or Inf`, exit 1, naming no file
    "std_nan": (_config("std", float("nan")), f"{POOL}.std nan: not a finite number"),
    "max_infinite": (_config("max", float("inf")), f"{POOL}.max inf: not a finite number"),
    "value_minus_infinite": (_config("values", [1.0, float("-inf")]), f"{POOL}.values[1] -inf: not a finite number"),
    "nested_mean_nan": (lambda summary: summary["configs"]["n1_pool7"]["tail_mean_total_fps"].update(
        {"mean": float("nan")}), f"{POOL}.tail_mean_total_fps.mean nan: not a finite number"),
    "ratio_infinite": (_comparison("ratio_of_means", float("inf")),
                       "comparisons[0].ratio_of_means inf: not a finite number"),
    "interval_nan": (_comparison("ratio_ci95", [float("nan"), 2.0]),
                     "comparisons[0].ratio_ci95[0] nan: not a finite number"),
    # a ratio of two rates below zero was drawn as a negative speed-up
    "ratio_negative": (_comparison("ratio_of_means", -1.8),
                       "comparisons[0].ratio_of_means -1.8: negative, where a ratio of rates or of rank counts "
                       "is 0 or more"),
    "interval_negative": (_comparison("ratio_ci95", [-2.0, 1.7]),
                          "comparisons[0].ratio_ci95[0] -2.0: negative, where a ratio of rates or of rank counts "),
    "per_repeat_negative": (lambda summary: summary["comparisons"][0]["per_repeat_ratios"].update({"2": -1.7}),
                            "comparisons[0].per_repeat_ratios['2'] -1.7: negative, where a ratio of rates "),
    "efficiency_negative": (_comparison("weak_scaling_efficiency", -0.86),
                            "comparisons[0].weak_scaling_efficiency -0.86: negative, where a ratio of rates "),
    "spread_negative": (_comparison("ratio_std_propagated", -0.08),
                        "comparisons[0].ratio_std_propagated -0.08: negative, where a standard deviation is 0 "),
    "ratio_not_of_means": (_comparison("ratio_of_means", 5.0),
                           f"comparisons[0].ratio_of_means 5.0, while configs['n2_shared'].mean / {POOL}.mean "
                           "is 1.71915"),
    "ratio_over_zero_mean": (lambda summary: summary["configs"]["n1_pool7"].update(
        {"mean": 0.0, "min": 0.0, "max": 0.0, "values": [0.0, 0.0], "std": 0.0}),
                             f"comparisons[0].ratio_of_means 1.7191522725175026, while {POOL}.mean is 0 "),
    # each figure held to those it is made from: a hand-edited figure was drawn as written
    "ratio_outside_range": (_comparison("ratio_range", [5.0, 6.0]),
                            "comparisons[0].ratio_of_means 1.71915, outside comparisons[0].ratio_range [5.0, 6.0], "
                            "the range every ratio of the configurations' means lies in"),
    "interval_outside_range": (_comparison("ratio_ci95", [3.0, 4.0]),
                               "comparisons[0].ratio_ci95 [3.0, 4.0], not within comparisons[0].ratio_range "),
    "range_not_of_values": (_comparison("ratio_range", [1.6, 1.9]),
                            "comparisons[0].ratio_range [1.6, 1.9], while its configurations' values give "
                            "[1.63642, 1.80625] (min compared / max baseline, max compared / min baseline)"),
    "throughput_negative": (_negated, f"{POOL}.mean -17537.616531881584: negative, where a rate, a count of env "
                                      "steps or a time is 0 or more"),
    "mean_not_of_values": (_config("mean", 17500.0),
                           f"{POOL}.mean 17500.0, while the mean of {POOL}.values is 17537.6"),
    "std_not_of_values": (_config("std", 10.0), f"{POOL}.std 10.0, while the std of {POOL}.values is 636.221"),
    "per_repeat_ratios_not_their_stats": (
        _comparison("per_repeat_ratios", {"1": 9.0, "2": 9.5}),
        "comparisons[0].per_repeat_ratio_stats.values [1.722580999752336, 1.7158950535416941], while "
        "comparisons[0].per_repeat_ratios holds [9.0, 9.5]; the statistics describe those ratios"),
    "per_repeat_ratios_not_of_values": (
        _per_repeat({"1": 1.8, "2": 1.7}),
        "comparisons[0].per_repeat_ratios['1'] 1.8, while its configurations' values of that repeat give 1.72258"),
    "ci_repeats_other": (_comparison("ci_repeats", 5),
                         "comparisons[0].ci_repeats 5, while comparisons[0].per_repeat_ratios holds 2 paired "
                         "repeat(s)"),
    "spread_not_of_means": (_comparison("ratio_std_propagated", 0.5),
                            "comparisons[0].ratio_std_propagated 0.5, while its ratio and its configurations' means "
                            "and stds give 0.0849245"),
    "rank_multiple_not_of_world_sizes": (
        lambda summary: summary["comparisons"][0].update({"rank_multiple": 8.0, "weak_scaling_efficiency": 5.0}),
        "comparisons[0].rank_multiple 8.0, while its configurations' world sizes are 1 and 2 (a multiple of 2)"),
    "efficiency_not_ratio_over_ranks": (
        _comparison("weak_scaling_efficiency", 5.0),
        "comparisons[0].weak_scaling_efficiency 5.0, while comparisons[0].ratio_of_means / "
        "comparisons[0].rank_multiple is 0.859576"),
}


@pytest.mark.parametrize("edit, where", _EDITS.values(), ids=_EDITS.keys())
def test_lists_of_different_lengths_are_named_with_their_file(tmp_path, capsys, edit, where):
    root = copy_committed_set(tmp_path, SET)
    edit_record(root, "summary.json", edit)
    out = tmp_path / "out"
    assert main(["report", "--run-set", str(root), "--output-dir", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    said = f"sacscale report: error: {root / 'summary.json'}: not a summary aggregate wrote ({where}"
    assert err.startswith(said) and err.endswith("); run aggregate again") and "\n" not in err, err
    assert not out.exists()


def test_an_interval_that_does_not_hold_its_ratio_is_drawn(tmp_path):
    """A bootstrap interval need not hold the ratio of means (BCa's correction can move it past
    it): the scaling curve turned it into a negative error bar, matplotlib's ValueError."""
    from sacscale.report.plots import scaling_bars

    configs = {f"n{k}": {"mean": 100.0 * k, "std": 1.0, "max": 100.0 * k, "values": [100.0 * k], "world_size": k}
               for k in (1, 2, 4)}
    comparisons = [{"baseline": "n1", "compared": f"n{k}", "ratio_of_means": float(k), "ratio_ci95": [k + 0.1, k + 0.3]}
                   for k in (2, 4)]
    scaling_bars({"configs": configs, "comparisons": comparisons}, tmp_path / "scaling_bars.png")
    assert (tmp_path / "scaling_bars.png").stat().st_size > 0
