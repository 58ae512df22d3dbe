"""Copies of another run's or rank's returns and lengths disguised past the copy checks: moved
by 3 log points (runs, ranks and reference runs), smoothed by a moving average, mirrored
around their trend, every other value exact, each value written twice, the last 10 values
exact (the page's final return), or a middle third noised. Each was verified as independent;
each is named now, and the committed sets' own runs are not."""

import json
import random
from functools import cache
from pathlib import Path

import numpy as np

from sacscale.analysis.events import Scalar, read_run
from sacscale.evidence.copied_events import copied, copied_rank_problems, copied_run_problems, run_values
from sacscale.evidence.reference_copies import any_run_values, copied_any_run_problems

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO / "results" / "h200x1_shared" / "runs"
TAGS = ("Episode/return", "Episode/length")


def _config(run: Path):
    return json.loads((run / "train_meta.json").read_text()).get("config")


@cache
def _shared_values() -> dict:
    return {run.name: run_values(run, _config(run)) for run in sorted(SHARED.iterdir()) if run.is_dir()}


def _forged(change) -> dict:
    """The set's values with shared_r2_n1_pool7's returns and lengths replaced by
    change(shared_r1_n1_pool7's values in step order, r2's own)."""
    by_run = {run: {rank: dict(values) for rank, values in ranks.items()} for run, ranks in _shared_values().items()}
    source, target = by_run["shared_r1_n1_pool7"][0], by_run["shared_r2_n1_pool7"][0]
    for tag in TAGS:
        steps = sorted(target[tag])
        theirs = [source[tag][s] for s in sorted(source[tag])]
        made = change(theirs, [target[tag][s] for s in steps])
        target[tag] = dict(zip(steps, (float(np.float32(v)) for v in made)))
    return by_run


# The forged pair: shared_r1_n1_pool7's rank 0 copied into shared_r2_n1_pool7's.
PAIR = ("shared_r1_n1_pool7", "shared_r2_n1_pool7")


def _named_copy(by_run: dict, *shown: str) -> str:
    """The forged pair's problem, which names `shown`. copied_run_problems judges each pair of
    series on its own, so the two runs alone (in the set's order) give that pair's problem as the
    whole set does; the set's other pairs are test_the_committed_shared_set_holds_no_copy's."""
    found = [p for p in copied_run_problems({run: by_run[run] for run in PAIR}) if p.startswith(
        "shared_r2_n1_pool7: runs/shared_r1_n1_pool7 tb/rank0 and runs/shared_r2_n1_pool7 tb/rank0 share")]
    assert found and all(part in found[0] for part in shown), (shown, found)
    return found[0]


def _noise(seed: int):
    rng = random.Random(seed)
    return lambda: 1 + 3e-4 * rng.uniform(-1, 1)


def _late(theirs: list, own: list, by: int, seed: int) -> list:
    noise = _noise(seed)
    return own[:by] + [theirs[i - by] * noise() for i in range(by, len(own))]


def test_the_committed_shared_set_holds_no_copy():
    assert copied_run_problems(_shared_values()) == []


def test_another_runs_returns_3_log_points_late_and_noised_are_named():
    _named_copy(_forged(lambda theirs, own: _late(theirs, own, 3, 1)),
                "Episode/return (step-to-step turns correlated at 0.99", "3 log points apart")


def _moving_average(values: list, width: int) -> list:
    half = width // 2
    return values[:half] + [sum(values[i - half:i + half + 1]) / width
                            for i in range(half, len(values) - half)] + values[len(values) - half:]


def test_another_runs_returns_smoothed_are_named():
    _named_copy(_forged(lambda theirs, own: _moving_average(theirs, 3)),
                "Episode/return (step-to-step turns correlated at 0.99", "moving average")


def test_another_runs_returns_mirrored_around_their_trend_are_named():
    _named_copy(_forged(lambda theirs, own: [2 * m - v for m, v in zip(_moving_average(theirs, 5), theirs)]),
                "Episode/return (step-to-step turns correlated at 0.99")


def test_every_other_value_exactly_another_runs_is_named():
    _named_copy(_forged(lambda theirs, own: [theirs[i] if i % 2 == 0 else v for i, v in enumerate(own)]),
                "Episode/return: 29 of 58")


def test_another_runs_values_each_written_twice_are_named():
    _named_copy(_forged(lambda theirs, own: [theirs[i - i % 2] for i in range(len(own))]),
                "Episode/return: 29 of 58")


def test_another_runs_last_ten_values_exact_are_named():
    _named_copy(_forged(lambda theirs, own: own[:-10] + theirs[-10:]), "Episode/return (consecutive values): 10 of 58")


def test_a_middle_third_of_another_runs_returns_noised_is_named():
    noise = _noise(2)
    found = _named_copy(_forged(lambda theirs, own: own[:19] + [v * noise() for v in theirs[19:39]] + own[39:]),
                        "Episode/return (step-to-step turns correlated at 0.99")
    assert "in a window of 16 turns" in found


def test_a_ranks_returns_3_log_points_late_are_named():
    series = read_run(SHARED / "shared_r2_n2_shared")
    noise = _noise(3)
    for tag in TAGS:
        ours = series[0][tag]
        series[1][tag] = ours[:3] + [Scalar(s.step, s.wall_time, float(np.float32(ours[i - 3].value * noise())))
                                     for i, s in enumerate(ours) if i >= 3]
    (found,) = copied_rank_problems("r", series, _config(SHARED / "shared_r2_n2_shared"))
    assert found.startswith("r: tb/rank0 and tb/rank1 share") and "3 log points apart" in found, found


def test_another_reference_runs_events_3_log_points_late_are_named():
    runs = REPO / "results" / "h200x1_ref" / "runs"
    by_run = {run.name: any_run_values(run, _config(run)) for run in sorted(runs.iterdir()) if run.is_dir()}
    source, target = by_run["pair_r1_ref_n1"][0], by_run["pair_r2_ref_n1"][0]
    for tag in TAGS:
        steps = sorted(target[tag])
        made = _late([source[tag][s] for s in sorted(source[tag])], [target[tag][s] for s in steps], 3, 4)
        target[tag] = dict(zip(steps, made))
    named = "pair_r2_ref_n1: runs/pair_r1_ref_n1 ref_logs and runs/pair_r2_ref_n1 ref_logs"
    found = [p for p in copied_any_run_problems(by_run, runs) if p.startswith(named)]
    assert found and "3 log points apart" in found[0], found


def test_independent_noise_is_not_a_copy():
    """Two series of independent scatter around one trend, however long: not named."""
    rng = np.random.default_rng(0)
    trend = np.linspace(0, 20, 300)
    a, b = (dict(enumerate(trend + rng.standard_normal(300))) for _ in range(2))
    assert copied({"Episode/return": a}, {"Episode/return": b}) == []
