"""Long series (a legitimate run of 100,000 iterations logged every 5 holds 20,000 points a tag)
are judged for copied fluctuations in memory as the series' and time as the series' length
times the lags': at lags up to MAX_LAG log points either way. Judged at every lag and every
window, 20,000 points would need n x n arrays (gigabytes each) and minutes a tag."""

from __future__ import annotations

import numpy as np

from sacscale.analysis.events import Scalar
from sacscale.evidence.copied_events import copied_rank_problems
from sacscale.evidence.copied_fluctuations import FULL_SEARCH_POINTS, MAX_LAG, fluctuations_copied

POINTS = 20_000


def _returns(seed: int, points: int = POINTS) -> np.ndarray:
    """Episode returns: a learning trend, each collector's episodes scattered around it."""
    rng = np.random.default_rng(seed)
    return np.linspace(0.0, 300.0, points) + rng.normal(0.0, 5.0, points)


def _by_step(values: np.ndarray) -> dict[int, float]:
    return {10 * (i + 1): float(v) for i, v in enumerate(values)}


def _noised(values: np.ndarray, seed: int, share: float = 3e-4) -> np.ndarray:
    return values * (1 + share * np.random.default_rng(seed).standard_normal(len(values)))


def _moved(values: np.ndarray, own: np.ndarray, points: int) -> np.ndarray:
    """`values` moved `points` log points later, the first ones `own`."""
    return np.concatenate((own[:points], values[:len(values) - points]))


def test_an_independent_long_pair_is_judged_and_its_own():
    """Every check verify runs on a rank pair, on 20,000 points of returns each."""
    ranks = {rank: {"Episode/return": [Scalar(step, 1.0, value) for step, value in _by_step(_returns(rank)).items()]}
             for rank in (0, 1)}
    assert copied_rank_problems("r", ranks) == []


def test_a_long_copy_noised_and_moved_three_log_points_is_named():
    own, other = _returns(1), _returns(2)
    forged = _moved(_noised(own, 3), other, 3)
    how = fluctuations_copied("Episode/return", _by_step(own), _by_step(forged))
    assert how is not None and "3 log points apart" in how and f"over {POINTS - 2 - 3}" in how, how


def test_a_window_copied_into_a_long_series_is_named():
    """40 of 20,000 values copied, noised and moved 5 log points: a copy of part of a run."""
    own, forged = _returns(4), _returns(5)
    forged[12_005:12_045] = _noised(own[12_000:12_040], 6)
    assert 5 < MAX_LAG
    how = fluctuations_copied("Episode/return", _by_step(own), _by_step(forged))
    assert how is not None and "in a window of 16 turns, 5 log points apart" in how, how


def test_a_series_of_committed_length_is_still_judged_at_every_lag():
    """Committed sets log at most 600 points: a copy moved past MAX_LAG is named there."""
    points = min(FULL_SEARCH_POINTS, 600)
    own, other = _returns(7, points), _returns(8, points)
    forged = _moved(_noised(own, 9), other, MAX_LAG + 50)
    how = fluctuations_copied("Episode/return", _by_step(own), _by_step(forged))
    assert how is not None and f"{MAX_LAG + 50} log points apart" in how, how
