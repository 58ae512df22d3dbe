"""Copies of returns and lengths that the turns' correlation (sacscale.evidence.copied_fluctuations)
misses: passed through a short linear filter of any weights (a weighted or exponential average,
a mirror, a negation: each is this series' turns as a few of the other's, weighted) over the
whole series or its last half only (the window the page's figures read), of the last few values
only (the page's final return, under a window), run at double speed (every other value, or a
short filter of them first: a mean of each pair or of each 4), or with some of them kept the
run's own (as many as two of every three). Each statistic's threshold is set over every
legitimate pair of rank series of the committed sets (docs/evidence.md): the worst legitimate
value is written beside it."""

from __future__ import annotations

import math

import numpy as np

from sacscale.evidence.copied_fluctuations import (
    COPY_CORRELATION, FILTERS, MIN_TURNS, WINDOW_TURNS, lag_correlations, turns, windowed)

# The filter's reach: this series' turn fitted on the other's at lags -FIT_REACH..FIT_REACH
# around a candidate lag, plus its own previous turn (a first-order recursive filter:
# exponential smoothing) and an intercept. Candidates: every lag a filter of up to
# 2 * FIT_REACH + 1 taps centres on (a causal one's taps centre behind lag 0), and the plain
# correlation's best few.
FIT_REACH = 3
# the turns a fit needs (3 x its 9 coefficients: a short fit explains noise by chance)
MIN_FIT_TURNS = 3 * (2 * FIT_REACH + 3)
# R^2 of the fit at least this much is a filtered copy's, over all the turns and over the last
# half (the window the page's figures read: a copy of it alone). Over the 846 legitimate pairs of
# rank series of the committed sets (both tags, both ways) the fit reaches at most 0.98767 over
# all turns (two ranks of one run, 36 turns; 1 - R^2 2.5 times the threshold's), 0.97962 over
# the last half (two ranks of one run, 47 turns; 4.1 times); a weighted 2- or 3-point average or
# exponential smoothing (0.2 to 0.5) of a copy noised by 3e-4 of its values keeps 0.9974 and
# more, a causal 5-tap filter 0.99999 (0.9960 noised by 1e-3 of its values), the last half
# alone through a 5-tap mean 3 log points late, noised by 3e-4, 0.9986 (27 turns).
FIT_R2 = 0.995
# the plain correlation's best few lags, over all lags and over those of MIN_FIT_TURNS turns
FIT_LAGS = 3


def _design(x: np.ndarray, y: np.ndarray, lag: int, stride: int, reach: int,
            least: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows i (x[i] explained): y[stride * i + lag + j] for j in -reach..reach, x[i - 1], 1;
    none unless at least `least` rows."""
    first = max(1, -((lag - reach) // stride))
    last = min(len(x), (len(y) - 1 - reach - lag) // stride + 1)
    if last - first < least:
        return np.empty((0, 0)), np.empty(0)
    rows = np.arange(first, last)
    columns = [y[stride * rows + lag + j] for j in range(-reach, reach + 1)]
    columns += [x[rows - 1], np.ones(len(rows))]
    return np.column_stack(columns), x[rows]


def fit_r2(x: np.ndarray, y: np.ndarray, lag: int, stride: int = 1, reach: int = FIT_REACH,
           least: int = MIN_FIT_TURNS) -> tuple[float, int]:
    """(R^2, turns) of x's turns fitted as a short filter of y's around `lag` (y's turn
    stride * i + lag for x's i: a copy run `stride` times faster), over at least `least` turns."""
    design, target = _design(x, y, lag, stride, reach, least)
    if not len(target):
        return 0.0, 0
    spread = float(np.sum((target - target.mean()) ** 2))
    if spread <= 0:
        return 0.0, 0
    coefficients, *_ = np.linalg.lstsq(design, target, rcond=None)
    residual = target - design @ coefficients
    return 1 - float(residual @ residual) / spread, len(target)


def best_lags(x: np.ndarray, lag_r: np.ndarray, least: int = MIN_FIT_TURNS) -> set[int]:
    """The lags where the plain correlation `lag_r` (index: lag + len(x) - 1) is highest, over
    all of them and over those where at least `least` of x's turns overlap the other's (far
    lags of a few turns correlate highest by chance)."""
    lags = np.arange(len(lag_r)) - (len(x) - 1)
    overlap = np.minimum(len(x), len(lag_r) - len(x) + 1 - lags) - np.maximum(0, -lags)
    covered = np.where(overlap >= least, np.abs(lag_r), 0.0)
    return {int(lags[i]) for r in (np.abs(lag_r), covered) for i in np.argsort(-r)[:FIT_LAGS]}


def best_fit(x: np.ndarray, y: np.ndarray, lag_r: np.ndarray, start: int = 0) -> tuple[float, int, int]:
    """(R^2, lag, turns) of the best fit of x's turns from `start` on, at every lag a filter of
    up to 2 * FIT_REACH + 1 taps centres on (causal or not) and where the plain correlation
    `lag_r` of those turns with y's is highest."""
    part = x[start:]
    near = range(start - 2 * FIT_REACH, start + 2 * FIT_REACH + 1)
    candidates = set(near) | best_lags(part, lag_r)
    fits = [(*fit_r2(part, y, lag), lag) for lag in sorted(candidates)]
    r2, count, lag = max(fits)
    return r2, lag, count


def window_fit(x: np.ndarray, y: np.ndarray, start: int) -> tuple[float, int, int]:
    """best_fit of x's turns from `start` on (a copy of part of a run: the last half, the
    window the page's figures read, keeps the other's turns while the run's own first half
    pulls the whole series' fit down)."""
    return best_fit(x, y, lag_correlations(x[start:], y), start)


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
# (1 - r 48 times the threshold's). A copy through a short filter first (a mean of each pair of
# values, or of each 4): this series' turns fitted as a filter of FASTER_REACH lags either side
# of the other's turns taken two at a time (every other value's turns are a 3-tap filter of them,
# a 4-tap mean's a 6-tap one; 9 coefficients, over at least 21 turns: a copy of the last half
# alone), at the best lags of every other value. Over the same pairs R^2 reaches at most 0.96827
# (two runs' lengths, 315 turns; 1 - R^2 6.3 times the threshold's);
# pair means of a copy noised by 1e-4 of its values, its 3-point weighted means or 4-point
# means keep 0.9999.
FASTER_REACH = 3
FASTER_TURNS = 21
FASTER_FIT_R2 = 0.995

# A tail copied with some values kept the run's own (no TAIL_TURNS consecutive turns copied):
# of the last TAIL_VALUES values of one series (a level, a value equal to its neighbour, left
# out), at least KEPT_COPIES within NEAR of the other's typical turn (the median size) of the
# other's values at one alignment, counting the copied positions only: the near values after
# the last OWN_RUN in a row not near (the run's own kept between copied ones). Over the same
# pairs at most 3 of 20 are; a copy with every 2nd value the run's own, x(1 + 3e-4 u), 10 of 20,
# every 3rd 14, every 7th 17, only every 3rd copied (two own between) 7.
TAIL_VALUES = 20
NEAR = 0.02
KEPT_COPIES = 7
OWN_RUN = 3


def _fitted(x: np.ndarray, y: np.ndarray) -> str | None:
    # the fit's lag is only the centre of its taps (any of several covers a short filter): not shown
    for where, part in (("", lambda u: 0), (" in the last half", lambda u: len(u) // 2)):
        r2, _, count = max(window_fit(u, v, part(u)) for u, v in ((x, y), (y, x)))
        if r2 >= FIT_R2:
            return (f" (step-to-step turns{where} fitted as a short linear filter of the other's, R^2 "
                    f"{math.floor(r2 * 1e5) / 1e5:.5f} over {count} turns)")
    return None


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


def _faster_fit(x: np.ndarray, v: np.ndarray, offset: int, lag_r: np.ndarray) -> float:
    """R^2 of x's turns fitted as a short filter of v's turns taken two at a time, at the lags
    where x correlates best with every other value of v (from `offset`): a filtered copy run
    at double speed (every other value is its turns through 1, 2, 1). A longer filter's taps
    centre off every other value's: the centres a turn either side are tried too."""
    full = turns(v)
    centres = {2 * lag + offset + shift for lag in best_lags(x, lag_r, FASTER_TURNS) for shift in (0, 1, 2)}
    return max(fit_r2(x, full, centre, 2, FASTER_REACH, FASTER_TURNS)[0] for centre in centres)


def _decimated(a: np.ndarray, b: np.ndarray) -> str | None:
    for u, v in ((a, b), (b, a)):
        for offset in (0, 1):
            x, y = turns(u), turns(v[offset::2])
            if min(len(x), len(y)) < WINDOW_TURNS:
                continue
            lag_r = lag_correlations(x, y)
            r = float(abs(lag_r).max())
            if r >= COPY_CORRELATION:
                return (f" (step-to-step turns correlated at {math.floor(r * 1e5) / 1e5:.5f} with "
                        "every other value of the other's: a copy run at another speed)")
            r2 = _faster_fit(x, v, offset, lag_r)
            if r2 >= FASTER_FIT_R2:
                return (f" (step-to-step turns fitted as a short linear filter of the other's at double "
                        f"speed, R^2 {math.floor(r2 * 1e5) / 1e5:.5f}: a copy run at another speed)")
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


def _copied_count(near: np.ndarray) -> np.ndarray:
    """For each row of `near` (a tail's values near the other's at one alignment), how many
    are near after its last OWN_RUN values in a row not near: the copied positions, with
    the run's own values between them."""
    apart = ~near
    for shift in range(1, OWN_RUN):
        apart = apart[:, :-1] & ~near[:, shift:]
    positions = np.arange(near.shape[1])
    own_run_end = np.where(apart, positions[:apart.shape[1]] + OWN_RUN - 1, -1).max(axis=1, initial=-1)
    return (near & (positions > own_run_end[:, None])).sum(axis=1)


def _near_count(u: np.ndarray, v: np.ndarray) -> int:
    """The most of u's last TAIL_VALUES values (levels left out) near v's at one alignment,
    copied positions only (_copied_count)."""
    scale = float(np.median(np.abs(turns(v))))
    if scale <= 0 or min(len(u), len(v)) <= TAIL_VALUES:
        return 0
    tail, before = u[-TAIL_VALUES:], u[-TAIL_VALUES - 1:-1]
    level = (tail == before) | np.append(tail[1:] == tail[:-1], False)
    windows = np.lib.stride_tricks.sliding_window_view(v, TAIL_VALUES)
    near = (np.abs(windows - tail) <= NEAR * scale) & ~level
    return int(_copied_count(near).max())


def _kept_tail(a: np.ndarray, b: np.ndarray) -> str | None:
    count = max(_near_count(a, b), _near_count(b, a))
    if count < KEPT_COPIES:
        return None
    return (f" (the last {TAIL_VALUES} values: {count} within {NEAR:.0%} of a typical step-to-step turn "
            f"of the other's at one alignment, at most {OWN_RUN - 1} other values between them)")


# A copy of another run read through a lag that moves along the run (interpolated between its
# values), or blended with the run's own values (w x the other's + (1 - w) x its own): each
# value is matched to a point of the other series' piecewise-linear curve along the best
# monotone path (speed 1/2 to 3/2, within WARP_BAND log points, positions in steps of
# 1/WARP_GRID), and the RMS distance is measured against the RMS of the series' own turns.
# Judged between runs only: two ranks of one run share a policy and their values' spread
# (legitimately 0.055 apart). Over the legitimate pairs of series of two runs of the committed
# sets (either way round, the smaller taken; 638 over all values, 374 over the last half) the
# distance reaches at least 0.152 over all values (two runs of one seed, 38 values) and 0.255
# over the last half (two runs of one seed, 174 values): 2.0 and 2.8 times the thresholds. A copy
# through a lag sliding -3..3 (-5..5) gives 0.021-0.024 (0.042-0.046); a blend at w 0.9
# 0.03-0.04, at w 0.8 0.068-0.094, at w 0.5 0.30-0.39 (not named); the last half blended at w 0.9
# 0.075-0.085.
WARP_GRID = 8
WARP_BAND = 6
WARP_SPEEDS = range(WARP_GRID // 2, 3 * WARP_GRID // 2 + 1)
WARP_DISTANCE = 0.075
WARP_HALF_DISTANCE = 0.09
# values a path needs (the last half of a run of 58 values): shorter series of two runs come
# legitimately near (at least 0.021 with 18 values, 0.039 with 28: their curves hold still)
WARP_VALUES = 29


def _least_of_speeds(before: np.ndarray, width: int) -> np.ndarray:
    """At each of `width` positions, the least cost of the len(WARP_SPEEDS) before it."""
    reached = before[:width].copy()
    for shift in range(1, len(WARP_SPEEDS)):
        np.minimum(reached, before[shift:shift + width], out=reached)
    return reached


def _path_cost(u: np.ndarray, v: np.ndarray) -> float:
    """The least mean squared distance of u's values from v's curve along a monotone path."""
    curve = np.interp(np.arange((len(v) - 1) * WARP_GRID + 1) / WARP_GRID, np.arange(len(v)), v)
    slowest, fastest = WARP_SPEEDS[-1], WARP_SPEEDS[0]
    # the cost so far at each curve position, with `slowest` unreachable positions in front; two
    # buffers in turn, of which only the band a value reaches is written (and cleared after):
    # a fresh full-length array for each value cost time as the square of the series' length
    cost = np.concatenate([np.full(slowest, np.inf), np.zeros(len(curve))])
    spare = np.full(len(curve) + slowest, np.inf)
    cost_band, spare_band = slice(0, len(cost)), slice(0, 0)
    for i, value in enumerate(u):
        low, high = max(0, (i - WARP_BAND) * WARP_GRID), min(len(curve), (i + WARP_BAND) * WARP_GRID + 1)
        if i:
            reached = _least_of_speeds(cost[low:high + slowest - fastest], high - low)
        else:
            reached = cost[low + slowest:high + slowest]
        band = slice(low + slowest, high + slowest)
        spare[spare_band] = np.inf
        spare[band] = reached + (value - curve[low:high]) ** 2
        cost, spare, cost_band, spare_band = spare, cost, band, cost_band
    return float(cost[cost_band].min()) / len(u)


def warp_distance(u: np.ndarray, v: np.ndarray) -> float:
    """RMS distance of u from v's curve along the best monotone path, over the RMS of u's turns
    (inf where u does not turn)."""
    spread = float(np.mean(turns(u) ** 2))
    return math.sqrt(_path_cost(u, v) / spread) if spread > 0 else math.inf


def warped(a: dict[int, float], b: dict[int, float]) -> str | None:
    """How two runs' series show a copy read through a moving lag or blended in, or None."""
    steps = sorted(a.keys() & b.keys())
    x, y = np.array([a[s] for s in steps], float), np.array([b[s] for s in steps], float)
    for where, start, threshold in (("", 0, WARP_DISTANCE),
                                    (" in the last half", len(steps) // 2, WARP_HALF_DISTANCE)):
        u, v = x[start:], y[start:]
        if len(u) < WARP_VALUES:
            continue
        distance = min(warp_distance(u, v), warp_distance(v, u))
        if distance <= threshold:
            return (f" (values{where} {math.ceil(distance * 1e3) / 1e3:.3f} typical step-to-step turns "
                    "from the other's, read along a lag that moves: the other's values read through "
                    "a moving lag or blended in)")
    return None
