"""Copies of another run's returns and lengths past the turns' correlation: through a weighted
2- or 3-point average or exponential smoothing, the last 15 turns noised (under the 16-turn
window), or the other run's curve at double speed (every other value); a causal 5- to 7-tap
filter (its taps centred behind lag 0, never fitted there), double speed through a mean of each
pair, and a tail alternating own and copied values. Each was verified as independent; each is
named now, and the committed shared set's runs are not."""

import random

import numpy as np
import pytest

from test_copied_events_disguised import _forged, _named_copy

from sacscale.evidence.copied_shapes import shape_copied


def _weighted(values: list, weights: tuple) -> list:
    return values[:len(weights) - 1] + [sum(w * values[i - j] for j, w in enumerate(weights))
                                        for i in range(len(weights) - 1, len(values))]


def _exponential(values: list, share: float) -> list:
    smoothed = [values[0]]
    for value in values[1:]:
        smoothed.append(share * value + (1 - share) * smoothed[-1])
    return smoothed


def _noised(values: list, seed: int, size: float = 3e-4) -> list:
    rng = random.Random(seed)
    return [v * (1 + size * rng.uniform(-1, 1)) for v in values]


def test_a_weighted_two_point_average_of_another_runs_returns_is_named():
    _named_copy(_forged(lambda theirs, own: _noised(_weighted(theirs, (0.6, 0.4)), 1, 1e-5)),
                "Episode/return (step-to-step turns fitted as a short linear filter of the other's, R^2 0.99")


def test_a_weighted_three_point_average_noised_is_named():
    _named_copy(_forged(lambda theirs, own: _noised(_weighted(theirs, (0.5, 0.3, 0.2)), 2)),
                "Episode/return (step-to-step turns fitted as a short linear filter")


@pytest.mark.parametrize("share", [0.5, 0.3])
def test_exponential_smoothing_of_another_runs_returns_is_named(share):
    _named_copy(_forged(lambda theirs, own: _noised(_exponential(theirs, share), 3)),
                "Episode/return (step-to-step turns fitted as a short linear filter")


@pytest.mark.parametrize("late", [0, 3])
def test_another_runs_last_15_turns_noised_are_named(late):
    def tail(theirs: list, own: list) -> list:
        return own[:-17] + _noised(theirs[len(theirs) - 17 - late:len(theirs) - late], 5)
    found = _named_copy(_forged(tail), "Episode/return (the last 8 step-to-step turns correlated at 0.99")
    assert late or "window of 16" not in found


def test_another_runs_curve_at_double_speed_is_named():
    half = 29
    _named_copy(_forged(lambda theirs, own: own[:half] + _noised(theirs[::2], 6)[:len(own) - half]),
                "Episode/return (step-to-step turns correlated at 0.99", "every other value of the other's")


def test_smooth_independent_series_are_not_a_filtered_copy():
    """Two independent series each smoothed: their turns share nothing a filter explains."""
    rng = np.random.default_rng(1)
    trend = np.linspace(0, 20, 200)
    a, b = (dict(enumerate(_exponential(list(trend + rng.standard_normal(200)), 0.4))) for _ in range(2))
    assert shape_copied(a, b) is None


def test_another_runs_last_20_values_noised_with_every_7th_kept_are_named():
    def kept(theirs: list, own: list) -> list:
        start = len(own) - 20
        copied = _noised(theirs, 7)
        kept_own = [v if (i - start) % 7 == 0 else copied[i] for i, v in enumerate(own[start:], start)]
        return own[:start] + kept_own
    found = _named_copy(_forged(kept), "Episode/return (the last 20 values: 17 within 2% of a typical step-to-step")
    assert "window of" not in found and "the last 8" not in found


def _causal(weights: tuple, head_normalised: bool):
    """Each value the weighted sum of the other's latest len(weights), the first few over the
    weights available (normalised) or not."""
    def filtered(values: list, own: list) -> list:
        made = []
        for i in range(len(values)):
            taps = weights[:i + 1]
            total = sum(w * values[i - j] for j, w in enumerate(taps))
            made.append(total / sum(taps) if head_normalised else total)
        return made
    return filtered


@pytest.mark.parametrize("weights, head_normalised, noise", [
    ((0.3, 0.25, 0.2, 0.15, 0.1), True, 0.0),
    ((0.3, 0.25, 0.2, 0.15, 0.1), False, 1e-3),
    ((1 / 7,) * 7, True, 0.0)])
def test_a_causal_filter_of_5_to_7_taps_of_another_runs_returns_is_named(weights, head_normalised, noise):
    causal = _causal(weights, head_normalised)
    _named_copy(_forged(lambda theirs, own: _noised(causal(theirs, own), 8, noise)),
                "Episode/return (step-to-step turns fitted as a short linear filter of the other's, R^2 0.99")


@pytest.mark.parametrize("weights", [(0.5, 0.5), (0.25, 0.5, 0.25)])
def test_another_runs_curve_at_double_speed_through_means_of_its_values_is_named(weights):
    def faster(theirs: list, own: list) -> list:
        half = len(own) // 2
        means = [sum(w * theirs[min(2 * i + j, len(theirs) - 1)] for j, w in enumerate(weights)) for i in range(half)]
        return own[:len(own) - half] + _noised(means, 9, 1e-4)
    _named_copy(_forged(faster), "Episode/return (step-to-step turns fitted as a short linear filter of the "
                "other's at double speed, R^2 0.99", "a copy run at another speed")


@pytest.mark.parametrize("every, copied", [(2, 10), (3, 14)])
def test_another_runs_last_20_values_with_every_2nd_or_3rd_kept_are_named(every, copied):
    def kept(theirs: list, own: list) -> list:
        start = len(own) - 20
        noised = _noised(theirs, 10)
        tail = enumerate(own[start:], start)
        return own[:start] + [v if (i - start + 1) % every == 0 else noised[i] for i, v in tail]
    found = _named_copy(_forged(kept), f"Episode/return (the last 20 values: {copied} within 2% of a typical "
                        "step-to-step turn of the other's at one alignment, at most 2 other values between them)")
    assert "window of" not in found and "the last 8" not in found


def test_another_runs_last_half_through_a_5_tap_mean_3_log_points_late_is_named():
    """Only the window the page's figures read copied: the run's own first half pulls the whole
    series' fit under the threshold, the last half's keeps it."""
    def last_half(theirs: list, own: list) -> list:
        half = len(own) // 2
        means = [sum(theirs[max(i - 3 - j, 0)] for j in range(5)) / 5 for i in range(len(own))]
        return own[:half] + _noised(means, 11)[half:]
    _named_copy(_forged(last_half), "Episode/return (step-to-step turns in the last half fitted as a short "
                "linear filter of the other's, R^2 0.99")


def test_another_runs_curve_at_double_speed_through_4_point_means_is_named():
    def faster(theirs: list, own: list) -> list:
        half = len(own) // 2
        means = [sum(theirs[min(2 * i + j, len(theirs) - 1)] for j in range(4)) / 4 for i in range(half)]
        return own[:len(own) - half] + _noised(means, 12, 1e-4)
    _named_copy(_forged(faster), "Episode/return (step-to-step turns fitted as a short linear filter of the "
                "other's at double speed, R^2 0.99", "a copy run at another speed")


def test_another_runs_last_20_values_one_in_3_copied_are_named():
    """Two of the run's own values between each copied one: 7 of the 20 copied."""
    def one_in_3(theirs: list, own: list) -> list:
        start = len(own) - 20
        noised = _noised(theirs, 13, 1e-4)
        return own[:start] + [noised[i] if (i - start) % 3 == 0 else v for i, v in enumerate(own[start:], start)]
    _named_copy(_forged(one_in_3), "Episode/return (the last 20 values: 7 within 2% of a typical "
                "step-to-step turn of the other's at one alignment")
