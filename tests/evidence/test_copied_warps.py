"""Copies of another run's returns and lengths read through a lag that moves along the run
(interpolated between its values), or blended with the run's own values (w x the other's +
(1 - w) x its own), over the whole run or its last half only (the page's window). Each was
verified as independent; each is named now, and the committed shared set's runs are not.
The thresholds' legitimate worst values were measured over every pair of series of two runs
of the committed sets (docs/evidence.md, Events copied)."""

import math

import numpy as np
import pytest

from test_copied_events_disguised import _forged, _named_copy

from sacscale.evidence.copied_shapes import WARP_DISTANCE, warp_distance

MOVED = "read along a lag that moves"


def _read_through(theirs: list, size: int, position) -> list:
    """theirs read at position(i) for i < size, linearly between its values."""
    return list(np.interp([position(i) for i in range(size)], np.arange(len(theirs)), theirs))


def _blend(weight: float, start_share: float = 0.0):
    def change(theirs: list, own: list) -> list:
        start = int(len(own) * start_share)
        return own[:start] + [weight * t + (1 - weight) * o for t, o in zip(theirs[start:], own[start:])]
    return change


@pytest.mark.parametrize("reach", [3, 5])
def test_another_runs_values_through_a_lag_sliding_along_the_run_are_named(reach):
    def change(theirs, own):
        return _read_through(theirs, len(own), lambda i: i + reach * math.sin(2 * math.pi * i / len(own)))
    _named_copy(_forged(change), MOVED)


def test_another_runs_values_blended_with_the_runs_own_at_0_8_are_named():
    _named_copy(_forged(_blend(0.8)), MOVED)


def test_the_last_half_blended_with_another_runs_at_0_9_is_named():
    _named_copy(_forged(_blend(0.9, 0.5)), "values in the last half", MOVED)


def test_independent_noisy_series_are_far_apart_and_a_moved_copy_is_near():
    rng = np.random.default_rng(7)
    trend = np.linspace(0, 10, 60)
    a, b = trend + rng.normal(0, 0.3, 60), trend + rng.normal(0, 0.3, 60)
    assert warp_distance(a, b) > 3 * WARP_DISTANCE
    moved = np.interp(np.arange(60) + 2 * np.sin(np.arange(60) / 9), np.arange(60), b)
    assert warp_distance(moved[:55], b[:55]) < WARP_DISTANCE / 2
