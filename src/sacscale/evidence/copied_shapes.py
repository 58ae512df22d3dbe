"""Copies of returns and lengths that the turns' correlation (sacscale.evidence.copied_fluctuations)
misses: passed through a short linear filter of any weights (a weighted or exponential average,
a mirror, a negation: each is this series' turns as a few of the other's, weighted), of the last
few values only (the page's final return, under a window), or with some of them kept the run's
own. Each statistic's threshold is set over every legitimate pair of rank series of the
committed sets (docs/evidence.md): the worst legitimate value is written beside it."""

from __future__ import annotations

import math

import numpy as np

from sacscale.evidence.copied_fluctuations import (
    COPY_CORRELATION, FILTERS, MIN_TURNS, WINDOW_TURNS, lag_correlations, turns, windowed)

# The filter's reach: this series' turn fitted on the other's at lags -FIT_REACH..FIT_REACH
# around the best lag (any FIR of up to 7 taps), plus its own previous turn (a first-order
# recursive filter: exponential smoothing) and an intercept.
FIT_REACH = 3
# the turns a fit needs (3 x its 9 coefficients: a short fit explains noise by chance)
MIN_FIT_TURNS = 27
# R^2 of the fit at least this much is a filtered copy's. Over the 846 legitimate pairs of rank
# series of the committed sets (both ways) the fit reaches at most 0.9832 (two ranks of one run,
# 30 turns; 1 - R^2 3.4 times the threshold's); a weighted 2- or 3-point average or exponential
# smoothing (0.2 to 0.5) of a copy noised by 3e-4 of its values keeps 0.9974 and more.
FIT_R2 = 0.995
# candidate lags for the fit: the plain correlation's best few
FIT_LAGS = 3


def _design(x: np.ndarray, y: np.ndarray, lag: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows i (x[i] explained): y[i + lag + j] for j in -FIT_REACH..FIT_REACH, x[i - 1], 1."""
    first = max(1, FIT_REACH - lag)
    last = min(len(x), len(y) - lag - FIT_REACH)
    if last - first < MIN_FIT_TURNS:
        return np.empty((0, 0)), np.empty(0)
    rows = np.arange(first, last)
    columns = [y[rows + lag + j] for j in range(-FIT_REACH, FIT_REACH + 1)]
    columns += [x[rows - 1], np.ones(len(rows))]
    return np.column_stack(columns), x[rows]


def fit_r2(x: np.ndarray, y: np.ndarray, lag: int) -> tuple[float, int]:
    """(R^2, turns) of x's turns fitted as a short filter of y's around `lag`."""
    design, target = _design(x, y, lag)
    if not len(target):
        return 0.0, 0
    spread = float(np.sum((target - target.mean()) ** 2))
    if spread <= 0:
        return 0.0, 0
    coefficients, *_ = np.linalg.lstsq(design, target, rcond=None)
    residual = target - design @ coefficients
    return 1 - float(residual @ residual) / spread, len(target)


def best_fit(x: np.ndarray, y: np.ndarray, lag_r: np.ndarray) -> tuple[float, int, int]:
    """(R^2, lag, turns) of the best fit at the lags where the plain correlation `lag_r`
    (index: lag + len(x) - 1) is highest, and at lag 0."""
    candidates = {0, *(int(i) - (len(x) - 1) for i in np.argsort(-np.abs(lag_r))[:FIT_LAGS])}
    fits = [(*fit_r2(x, y, lag), lag) for lag in sorted(candidates)]
    r2, count, lag = max(fits)
    return r2, lag, count


# The tail: the last this many turns of one series (the page's final values) against every
# window of the other's, filtered. Over the same pairs the tail's |r| reaches at most 0.99589
# at 8 turns (two runs of one seed; 1 - r 8.2 times the threshold's), 0.99836 at 6; shorter
# copies are the exact consecutive values' (copied_events.MATCHED_RUN). A copy of lengths
# x(1 + 3e-4 u) keeps 0.9998.
TAIL_TURNS = 8
TAIL_CORRELATION = 0.9995
# A copy run faster or slower: one series against every other value of the other (either
# offset), over all the turns both make at every lag (COPY_CORRELATION; windows left out, as
# costly on 1000-value reference series). Over the same pairs |r| reaches at most 0.99045
# (1 - r 48 times the threshold's).

# A tail copied with some values kept the run's own (no TAIL_TURNS consecutive turns copied):
# of the last TAIL_VALUES values of one series (a level, a value equal to its neighbour, left
# out), more than KEPT_SHARE within NEAR of the other's typical turn (the median size) of the
# other's values at one alignment. Over the same pairs at most 5 of 20 (25%) are; a copy with
# every 7th value the run's own, x(1 + 3e-4 u), 17 of 20.
TAIL_VALUES = 20
NEAR = 0.02
KEPT_SHARE = 0.6


def _fitted(x: np.ndarray, y: np.ndarray) -> str | None:
    # the fit's lag is only the centre of its taps (any of several covers a short filter): not shown
    r2, _, count = max(best_fit(u, v, lag_correlations(u, v)) for u, v in ((x, y), (y, x)))
    if r2 < FIT_R2:
        return None
    return (f" (step-to-step turns fitted as a short linear filter of the other's, R^2 "
            f"{math.floor(r2 * 1e5) / 1e5:.5f} over {count} turns)")


def _tail(x: np.ndarray, y: np.ndarray) -> str | None:
    for u, v in ((x, y), (y, x)):
        for described, kernel in FILTERS:
            filtered = np.convolve(v, kernel, mode="valid")
            if min(len(u), len(filtered)) < TAIL_TURNS:
                continue
            r = windowed(u[-TAIL_TURNS:], filtered, TAIL_TURNS)[0]
            if abs(r) >= TAIL_CORRELATION:
                against = f", against {described}" if described else ""
                return (f" (the last {TAIL_TURNS} step-to-step turns correlated at "
                        f"{math.floor(abs(r) * 1e5) / 1e5:.5f} with the other's{against})")
    return None


def _decimated(a: np.ndarray, b: np.ndarray) -> str | None:
    for u, v in ((a, b), (b, a)):
        for offset in (0, 1):
            x, y = turns(u), turns(v[offset::2])
            if min(len(x), len(y)) < WINDOW_TURNS:
                continue
            r = float(abs(lag_correlations(x, y)).max())
            if r >= COPY_CORRELATION:
                return (f" (step-to-step turns correlated at {math.floor(r * 1e5) / 1e5:.5f} with "
                        "every other value of the other's: a copy run at another speed)")
    return None


def shape_copied(a: dict[int, float], b: dict[int, float]) -> str | None:
    """How two series of returns or lengths show a filtered copy, a copied tail or a copy
    at another speed, or None."""
    steps = sorted(a.keys() & b.keys())
    if len(steps) < MIN_TURNS + 2:
        return None
    x, y = turns(np.array([a[s] for s in steps], float)), turns(np.array([b[s] for s in steps], float))
    own = np.array([a[s] for s in sorted(a)], float), np.array([b[s] for s in sorted(b)], float)
    return _fitted(x, y) or _tail(x, y) or _decimated(*own) or _kept_tail(*own)


def _near_share(u: np.ndarray, v: np.ndarray) -> float:
    """The largest share of u's last TAIL_VALUES values (levels left out) near v's at one
    alignment."""
    scale = float(np.median(np.abs(turns(v))))
    if scale <= 0 or min(len(u), len(v)) <= TAIL_VALUES:
        return 0.0
    tail, before = u[-TAIL_VALUES:], u[-TAIL_VALUES - 1:-1]
    level = (tail == before) | np.append(tail[1:] == tail[:-1], False)
    windows = np.lib.stride_tricks.sliding_window_view(v, TAIL_VALUES)
    near = (np.abs(windows - tail) <= NEAR * scale) & ~level
    return float(near.sum(axis=1).max()) / TAIL_VALUES


def _kept_tail(a: np.ndarray, b: np.ndarray) -> str | None:
    share = max(_near_share(a, b), _near_share(b, a))
    if share <= KEPT_SHARE:
        return None
    return (f" (the last {TAIL_VALUES} values: {round(share * TAIL_VALUES)} within {NEAR:.0%} of a "
            "typical step-to-step turn of the other's at one alignment)")
