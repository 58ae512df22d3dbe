"""Per-configuration statistics and the scaling comparisons."""

import statistics

import pytest

from sacscale.analysis.aggregate import (
    default_pairs,
    describe,
    phase_by_rank,
    summarize,
)


def _m(config, repeat, rate, world=1, devices="0"):
    return {"run": f"p_r{repeat}_{config}", "config": config, "repeat": repeat, "world_size": world,
            "devices": devices, "steady_env_steps_per_s": rate, "tail_mean_total_fps": rate * 1.1}


METRICS = [_m("n1", 1, 100.0), _m("n2", 1, 210.0, 2, "0,1"), _m("n1", 2, 110.0), _m("n2", 2, 200.0, 2, "0,1"),
           _m("n1", 3, 90.0), _m("n2", 3, 190.0, 2, "0,1")]


def test_stats_and_ratio():
    s = summarize(METRICS, ["n1", "n2"])
    n1, n2 = s["configs"]["n1"], s["configs"]["n2"]
    assert n1["mean"] == pytest.approx(100.0) and n2["mean"] == pytest.approx(200.0)
    assert n1["std"] == pytest.approx(statistics.stdev([100.0, 110.0, 90.0]))
    assert (n1["min"], n1["max"], n1["values"], n1["repeats"]) == (90.0, 110.0, [100.0, 110.0, 90.0], [1, 2, 3])
    (c,) = s["comparisons"]
    assert (c["baseline"], c["compared"]) == ("n1", "n2")
    assert c["ratio_of_means"] == pytest.approx(2.0)
    assert c["per_repeat_ratios"] == {"1": pytest.approx(2.1), "2": pytest.approx(200 / 110),
                                      "3": pytest.approx(190 / 90)}
    assert c["ratio_range"] == [pytest.approx(190 / 110), pytest.approx(210 / 90)]
    assert c["weak_scaling_efficiency"] == pytest.approx(1.0)
    expected_std = 2.0 * ((n1["std"] / 100) ** 2 + (n2["std"] / 200) ** 2) ** 0.5
    assert c["ratio_std_propagated"] == pytest.approx(expected_std)


def test_single_rank_configs_compare_as_listed():
    pairs, how = default_pairs(["n1_pool7", "n1_pool15"], {"n1_pool7": 1, "n1_pool15": 1})
    assert pairs == [("n1_pool7", "n1_pool15")]
    assert "compared as listed" in how and "not a GPU-scaling figure" in how


def test_multi_rank_paired_with_preceding_single_rank():
    order = ["n1_total64", "n2_pool32", "n1_local32", "n2_auto"]
    pairs, _ = default_pairs(order, {"n1_total64": 1, "n2_pool32": 2, "n1_local32": 1, "n2_auto": 2})
    assert pairs == [("n1_total64", "n2_pool32"), ("n1_local32", "n2_auto")]


def test_explicit_pair_with_unknown_config_fails():
    with pytest.raises(ValueError, match="n3"):
        summarize(METRICS, ["n1", "n2"], pairs=[("n1", "n3")])


def _traced(config, repeat, *rank_phases, top=None):
    return {"run": f"p_r{repeat}_{config}", "config": config, "repeat": repeat,
            "ranks": [{"rank": r, "phase_ms": phases} for r, phases in enumerate(rank_phases)],
            "phase_ms": rank_phases[0] if top is None else top}


def test_phase_by_rank_means_over_repeats():
    metrics = [
        _traced("n1", 1, {"learner_update_ms": 10.0, "collector_env_step_ms": 4.0}),
        _traced("n2", 1, {"learner_update_ms": 12.0}, {"learner_update_ms": 14.0, "learner_wait_ms": 1.0}),
        _traced("n1", 2, {"learner_update_ms": 20.0, "collector_env_step_ms": 6.0}),
        _traced("n2", 2, {"learner_update_ms": 16.0}, {"learner_update_ms": 18.0}),
        _traced("untraced", 1, {}, {}),
    ]
    assert phase_by_rank(metrics) == [
        {"config": "n1", "rank": 0, "runs": 2,
         "phase_ms": {"collector_env_step_ms": pytest.approx(5.0), "learner_update_ms": pytest.approx(15.0)}},
        {"config": "n2", "rank": 0, "runs": 2, "phase_ms": {"learner_update_ms": pytest.approx(14.0)}},
        # learner_wait_ms: only repeat 1 logged it, so its mean is over that run
        {"config": "n2", "rank": 1, "runs": 2,
         "phase_ms": {"learner_update_ms": pytest.approx(16.0), "learner_wait_ms": pytest.approx(1.0)}},
    ]


def test_phase_by_rank_reads_old_metrics_and_untraced():
    old = {"run": "p_r1_n1", "config": "n1", "repeat": 1, "ranks": [{"rank": 0}],
           "phase_ms": {"learner_update_ms": 3.0}}
    assert phase_by_rank([old]) == [{"config": "n1", "rank": 0, "runs": 1, "phase_ms": {"learner_update_ms": 3.0}}]
    assert phase_by_rank([_traced("n1", 1, {}, {})]) == []


def test_paired_percentile_bootstrap_ci_is_exact_and_brackets_the_ratio():
    import itertools

    from sacscale.analysis.aggregate import bootstrap_ratio_ci

    base, other = [100.0, 110.0, 90.0], [210.0, 200.0, 190.0]
    low, high = bootstrap_ratio_ci(base, other, method="percentile")
    # every one of the n^n resamples of the repeats, by brute force
    ratios = sorted(sum(other[i] for i in idx) / sum(base[i] for i in idx)
                    for idx in itertools.product(range(3), repeat=3))
    import numpy as np

    assert [low, high] == pytest.approx(list(np.quantile(ratios, [0.025, 0.975])))
    assert low <= 2.0 <= high and low < high
    assert bootstrap_ratio_ci([100.0], [200.0], method="percentile") is None          # one pair: no interval
    assert bootstrap_ratio_ci([1.0, 2.0], [2.0, 4.0], method="percentile") == [2.0, 2.0]  # a constant ratio
    nine = ([100.0 + k for k in range(9)], [200.0 + 2 * k for k in range(9)])
    assert bootstrap_ratio_ci(*nine, method="percentile") == bootstrap_ratio_ci(*nine, method="percentile")  # seeded


def test_bca_interval_is_scipys_paired_bca_and_deterministic():
    import numpy as np
    from scipy import stats

    from sacscale.analysis.aggregate import bootstrap_ratio_ci, ratio_interval

    base, other = [100.0, 110.0, 90.0, 105.0, 97.0], [210.0, 200.0, 190.0, 221.0, 188.0]
    interval, fallback = ratio_interval(base, other)
    assert fallback is None
    expected = stats.bootstrap((np.array(base), np.array(other)), lambda b, c, axis=-1: c.mean(axis) / b.mean(axis),
                               paired=True, vectorized=True, method="BCa", n_resamples=100_000,
                               rng=np.random.default_rng(0)).confidence_interval
    assert interval == pytest.approx([expected.low, expected.high], rel=1e-12)
    assert interval[0] <= sum(other) / sum(base) <= interval[1]
    assert bootstrap_ratio_ci(base, other) == interval  # the default, and seeded


def test_bca_falls_back_to_the_percentile_interval_and_says_why():
    from sacscale.analysis.aggregate import bootstrap_ratio_ci, ratio_interval

    assert ratio_interval([100.0], [200.0]) == (None, None)  # one pair: no interval
    constant, why = ratio_interval([1.0, 2.0, 3.0], [2.0, 4.0, 6.0])  # every resample has ratio 2
    assert constant == [2.0, 2.0] and "do not vary" in why
    two, why = ratio_interval([100.0, 110.0], [210.0, 200.0])
    assert two == bootstrap_ratio_ci([100.0, 110.0], [210.0, 200.0], method="percentile") and ">= 3" in why
    with pytest.raises(ValueError, match="unknown interval method"):
        ratio_interval([1.0, 2.0], [1.0, 2.0], method="bootstrap-t")


def test_summary_records_its_interval_method_and_sets_without_one_read_as_percentile():
    from sacscale.analysis.aggregate import CI_METHODS, recorded_ci_method

    bca = summarize(METRICS, ["n1", "n2"])
    assert bca["ci_bootstrap"] == "bca" and recorded_ci_method(bca) == "bca"
    assert bca["comparisons"][0]["ci_method"] == CI_METHODS["bca"] and "ci_fallback" in bca["comparisons"][0]
    old = summarize(METRICS, ["n1", "n2"], ci_method="percentile")  # as the committed sets were made
    assert "ci_bootstrap" not in old and recorded_ci_method(old) == "percentile"
    assert "ci_fallback" not in old["comparisons"][0] and old["comparisons"][0]["ci_method"] == CI_METHODS["percentile"]


def test_comparison_carries_the_ci_and_short_windows_are_flagged():
    metrics = [dict(m, window={"seconds": 12.0 if m["repeat"] == 1 else 45.0, "window_events": 10, "events": 20})
               for m in METRICS]
    s = summarize(metrics, ["n1", "n2"])
    (c,) = s["comparisons"]
    assert c["ci_repeats"] == 3 and "paired bootstrap" in c["ci_method"]
    assert c["ratio_ci95"][0] <= c["ratio_of_means"] <= c["ratio_ci95"][1]
    assert s["short_windows"] == ["p_r1_n1", "p_r1_n2"] and s["short_window_s"] == 30.0
    assert [r["window_s"] for r in s["runs"][:2]] == [12.0, 12.0] and s["runs"][0]["short_window"] is True


def test_time_to_quality_per_configuration_counts_the_repeats_that_reached_it():
    from sacscale.analysis.aggregate import quality_stats

    def at(steps, s):
        return {"threshold": 950.0, "iteration": 1, "env_steps": steps, "seconds": s}

    runs = [{"time_to_quality": {"episode_length": at(100.0, 10.0), "normalised_tracking_ang_vel": None}},
            {"time_to_quality": {"episode_length": at(300.0, 30.0), "normalised_tracking_ang_vel": None}},
            {"time_to_quality": {"episode_length": None, "normalised_tracking_ang_vel": None}}]
    got = quality_stats(runs)
    assert got["episode_length"]["reached"] == 2 and got["episode_length"]["of"] == 3
    assert got["episode_length"]["env_steps"]["mean"] == 200.0 and got["episode_length"]["seconds"]["max"] == 30.0
    assert got["normalised_tracking_ang_vel"] == {"reached": 0, "of": 3, "threshold": None,
                                                  "env_steps": describe([]), "seconds": describe([])}
    assert quality_stats([{"run": "old metrics, no field"}]) == {}
