"""A copy named by its fluctuations: two ranks' or two runs' episode returns and lengths
share a learning trend (one policy, or one seed's), but each collector's episodes scatter
around it on their own, so their step-to-step turns (second differences, which take out the
trend) are not the other's. A copy keeps the other's turns however it is changed below what a
page shows: noised by a few parts in 1e4, rounded to the page's two decimals, scaled, offset,
negated around its trend, moved by log points, or passed through a short linear filter (a
moving average of up to 5 points, or mirrored around one: the filter's turns are the filtered
turns). Judged by the Pearson correlation (its size, either sign) of one series' turns with the
other's, filtered, over all the turns both series make and over every window of WINDOW_TURNS
consecutive ones (a copy of part of a run): for series of up to FULL_SEARCH_POINTS log points at
every lag that leaves enough turns (a copy moved by any number of log points), for longer ones
at lags up to MAX_LAG log points either way, so that time grows as the points times the lags
and memory as the points."""

from __future__ import annotations

import math

import numpy as np

# The tags whose scatter is each rank's own: its envs' episodes. Phase times, rates and the
# reward terms are left out: ranks of a synced run wait for each other (their times and rates
# turn together, correlation up to 1.0) and share one policy (their reward terms' turns
# correlate up to 1.0); fall rates hold levels any two runs may share (up to 1.0).
FLUCTUATING_TAGS = ("Episode/return", "Episode/length")
# |r| of all the turns both series make at least this much is a copy's. Over the 423 pairs of
# rank series of the committed sets (within and across runs, every lag and filter below) |r|
# reaches at most 0.9960 (1 - r 20 times this threshold's); a copy noised by 3e-4 of its values
# or rounded to 2 decimals keeps at least 0.99996: see docs/evidence.md.
COPY_CORRELATION = 0.9998
# turns (both series' turn non-zero) a correlation over all turns needs to say anything
MIN_TURNS = 6
# A window: this many consecutive turns, each non-zero in both series (a copy of part of a
# run). Over the same pairs, lags and filters a window's |r| reaches at most 0.99868 (two runs
# of one seed; 1 - r 6.6 times the threshold's).
WINDOW_TURNS = 16
WINDOW_CORRELATION = 0.9998
# Series of up to this many log points are judged at every lag (every committed set logs at
# most 600); longer ones at lags of up to MAX_LAG log points either way, lag by lag, which keeps
# a 20,000-point pair to seconds a tag instead of n x n arrays (gigabytes) and minutes.
FULL_SEARCH_POINTS = 1024
MAX_LAG = 256


def _box(width: int) -> np.ndarray:
    return np.full(width, 1.0 / width)


def _mirror(width: int) -> np.ndarray:
    """2 x the running mean - the value: the series mirrored around its own trend."""
    kernel = 2 * _box(width)
    kernel[width // 2] -= 1
    return kernel


# (how a filter is described, its kernel): the other series as it is, its moving averages,
# and mirrored around them.
FILTERS = ((None, np.ones(1)),
           *((f"its {k}-point moving average", _box(k)) for k in range(2, 6)),
           *((f"mirrored around its {k}-point mean", _mirror(k)) for k in range(3, 6)))


def turns(values: np.ndarray) -> np.ndarray:
    return values[:-2] - 2 * values[1:-1] + values[2:]


def _lagged_sums(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, ...]:
    """Σ over i of f(x[i]) g(y[i + lag]) at every lag -(len(x) - 1) .. len(y) - 1, for the sums
    a correlation needs: pairs, both turns non-zero, both zero, Σx, Σy, Σx², Σy², Σxy."""
    ones_x, ones_y = np.ones_like(x), np.ones_like(y)
    terms = ((ones_x, ones_y), (x != 0, y != 0), (x == 0, y == 0), (x, ones_y), (ones_x, y),
             (x * x, ones_y), (ones_x, y * y), (x, y))
    return tuple(np.correlate(g.astype(float), f.astype(float), "full") for f, g in terms)


def _r(n, sx, sy, sxx, syy, sxy) -> np.ndarray:
    spread = (n * sxx - sx * sx) * (n * syy - sy * sy)
    return np.where(spread > 0, (n * sxy - sx * sy) / np.sqrt(np.where(spread > 0, spread, 1.0)), 0.0)


def _prefix(values: np.ndarray) -> np.ndarray:
    return np.concatenate(([0.0], np.cumsum(values, dtype=float)))


def _spans(x: np.ndarray, y: np.ndarray, reach: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The lags -reach .. reach at which x[i] and y[i + lag] overlap, and where in x each
    overlap starts and stops."""
    lags = np.arange(max(-reach, -(len(x) - 1)), min(reach, len(y) - 1) + 1)
    return lags, np.maximum(0, -lags), np.minimum(len(x), len(y) - lags)


def _products(u: np.ndarray, v: np.ndarray, lags: np.ndarray) -> np.ndarray:
    """Σ over i of u[i] v[i + lag] at each of the consecutive `lags`, over v padded with zeros
    (memory as the series'). One dot product a lag: np.correlate took a hundred times as long
    for the same sums."""
    first, padded = int(lags[0]), np.zeros(len(u) + int(lags[-1] - lags[0]))
    low, high = max(0, -first), min(len(padded), len(v) - first)
    padded[low:high] = v[low + first:high + first]
    u = u.astype(float)
    return np.array([padded[shift:shift + len(u)] @ u for shift in range(len(lags))])


def _near_sums(x: np.ndarray, y: np.ndarray, reach: int) -> tuple[tuple[np.ndarray, ...], int]:
    """_lagged_sums at lags up to `reach` either way, and the first lag: the products' sums
    lag by lag, the rest from running sums (memory as the series')."""
    lags, starts, stops = _spans(x, y, reach)
    made_x, made_y = (x != 0).astype(float), (y != 0).astype(float)

    def over_x(values: np.ndarray) -> np.ndarray:
        running = _prefix(values)
        return running[stops] - running[starts]

    def over_y(values: np.ndarray) -> np.ndarray:
        running = _prefix(values)
        return running[stops + lags] - running[starts + lags]

    sxy, both = _products(x, y, lags), _products(made_x, made_y, lags)
    pairs, either = stops - starts, over_x(made_x) + over_y(made_y) - both
    return (pairs, both, pairs - either, over_x(x), over_y(y), over_x(x * x), over_y(y * y), sxy), int(lags[0])


def _best_whole(sums: tuple[np.ndarray, ...], first_lag: int) -> tuple[float, int, int]:
    pairs, both, neither, sx, sy, sxx, syy, sxy = sums
    n = pairs - neither
    r = np.where(both >= MIN_TURNS, _r(n, sx, sy, sxx, syy, sxy), 0.0)
    best = int(np.abs(r).argmax())
    return float(r[best]), best + first_lag, int(round(n[best]))


def _reach(points: int) -> int | None:
    """The lags a series of this many log points is judged at either way (None: every lag)."""
    return None if points <= FULL_SEARCH_POINTS else MAX_LAG


def lag_correlations(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """r of the turns either series makes at every lag -(len(x) - 1) .. len(y) - 1 (0 where
    fewer than MIN_TURNS are made by both, and past MAX_LAG either way for a series of more
    than FULL_SEARCH_POINTS log points)."""
    reach = _reach(max(len(x), len(y)) + 2)
    sums, first = (_lagged_sums(x, y), -(len(x) - 1)) if reach is None else _near_sums(x, y, reach)
    pairs, both, neither, sx, sy, sxx, syy, sxy = sums
    r = np.zeros(len(x) + len(y) - 1)
    r[first + len(x) - 1:][:len(pairs)] = np.where(both >= MIN_TURNS, _r(pairs - neither, sx, sy, sxx, syy, sxy), 0.0)
    return r


def _whole(x: np.ndarray, y: np.ndarray, reach: int | None = None) -> tuple[float, int, int]:
    """(r, lag, turns) at the lag where |r| is highest, over the turns either series makes,
    at lags where at least MIN_TURNS are made by both: every lag, or those up to `reach`
    either way, one at a time (memory as the series', not the lags' count)."""
    if reach is None:
        return _best_whole(_lagged_sums(x, y), -(len(x) - 1))
    return _best_whole(*_near_sums(x, y, reach))


def _window_sums(values: np.ndarray, width: int) -> np.ndarray:
    return np.convolve(values, np.ones(width), mode="valid")


def windowed(x: np.ndarray, y: np.ndarray, width: int = WINDOW_TURNS) -> tuple[float, int, int]:
    """(the turns' correlation about 0, a turn's expected value, in the window of `width`
    turns both series make where its size is highest; lag; where the window starts in x)."""
    starts_x, starts_y = len(x) - width + 1, len(y) - width + 1
    products = np.outer(x, y)  # each window's Σxy: a diagonal band of it, summed in order
    sxy = sum(products[k:k + starts_x, k:k + starts_y] for k in range(width))
    made_x, made_y = _window_sums(x != 0, width) == width, _window_sums(y != 0, width) == width
    spread = np.outer(_window_sums(x * x, width), _window_sums(y * y, width))
    r = np.where(np.outer(made_x, made_y) & (spread > 0), sxy / np.sqrt(np.where(spread > 0, spread, 1.0)), 0.0)
    at_x, at_y = np.unravel_index(int(np.abs(r).argmax()), r.shape)
    return float(r[at_x, at_y]), int(at_y - at_x), int(at_x)


def _sliding_sums(values: np.ndarray, width: int) -> np.ndarray:
    """Σ of every `width` consecutive values, from sums of 1, 2, 4, ... values (a few whole-array
    additions however wide, each sum as exact as a short one)."""
    count, offset, block, size, total = len(values) - width + 1, 0, values, 1, None
    while True:
        if width & size:
            part = block[offset:offset + count]
            total, offset = part if total is None else total + part, offset + size
        if size * 2 > width:
            return total
        block, size = block[:-size] + block[size:], size * 2


def _inverse_sizes(values: np.ndarray, width: int) -> np.ndarray:
    """1 / sqrt(Σ value²) of every window of `width` values all non-zero, 0 for the others."""
    size = _window_sums(values * values, width)
    made = (_window_sums(values != 0, width) == width) & (size > 0)
    return np.where(made, 1 / np.sqrt(np.where(made, size, 1.0)), 0.0)


def windowed_near(x: np.ndarray, y: np.ndarray, reach: int, width: int = WINDOW_TURNS) -> tuple[float, int, int]:
    """windowed at lags up to `reach` either way only, one lag at a time: memory as the
    series', time as the series' length times the lags'."""
    scale_x, scale_y = _inverse_sizes(x, width), _inverse_sizes(y, width)
    best = (0.0, 0, 0)
    for lag, start, stop in zip(*_spans(x, y, reach)):
        if stop - start < width:
            continue
        windows = _sliding_sums(x[start:stop] * y[start + lag:stop + lag], width)
        r = windows * scale_x[start:stop - width + 1] * scale_y[start + lag:stop + lag - width + 1]
        at = int(np.abs(r).argmax())
        if abs(r[at]) > abs(best[0]):
            best = (float(r[at]), int(lag), int(start + at))
    return best


def _judged(a: np.ndarray, b: np.ndarray, reach: int | None) -> list[tuple[float, int, int, str | None, int | None]]:
    """(r, lag, turns, filter, window start or None) for one series against the other's
    filtered turns: the best over all turns and the best window, at every lag (reach None) or
    at lags up to `reach` either way."""
    found = []
    for described, kernel in FILTERS:
        filtered, centre = np.convolve(b, kernel, mode="valid"), (len(kernel) - 1) // 2
        if min(len(a), len(filtered)) < MIN_TURNS:
            continue
        r, lag, count = _whole(a, filtered, reach)
        found.append((r, lag + centre, count, described, None))
        if min(len(a), len(filtered)) >= WINDOW_TURNS:
            r, lag, start = windowed(a, filtered) if reach is None else windowed_near(a, filtered, reach)
            found.append((r, lag + centre, WINDOW_TURNS, described, start))
    return found


def turn_correlations(a: dict[int, float], b: dict[int, float]) -> list[tuple[float, int, int, str | None, int | None]]:
    """Every filter's best correlations (r, lag, turns, filter, window start) of the two
    series' turns over the steps both log, each series against the other filtered; the lag
    counts log points of b after a's. Every lag for series of up to FULL_SEARCH_POINTS log
    points, lags up to MAX_LAG either way for longer ones."""
    steps = sorted(a.keys() & b.keys())
    if len(steps) < MIN_TURNS + 2:
        return []
    x, y = turns(np.array([a[s] for s in steps], float)), turns(np.array([b[s] for s in steps], float))
    reach = _reach(len(steps))
    forward = _judged(x, y, reach)
    backward = [(r, -lag, n, filtered, start) for r, lag, n, filtered, start in _judged(y, x, reach) if filtered]
    return forward + backward


def _copy(found: tuple[float, int, int, str | None, int | None]) -> bool:
    r, _, _, _, start = found
    return abs(r) >= (COPY_CORRELATION if start is None else WINDOW_CORRELATION)


def _how(found: tuple[float, int, int, str | None, int | None]) -> str:
    r, lag, count, filtered, start = found
    where = f" in a window of {count} turns" if start is not None else f" over {count} turns"
    apart = f", {abs(lag)} log point{'s' if abs(lag) > 1 else ''} apart" if lag else ""
    sign = ", negated" if r < 0 else ""
    against = f", against {filtered}" if filtered else ""
    return f" (step-to-step turns correlated at {math.floor(abs(r) * 1e5) / 1e5:.5f}{where}{apart}{sign}{against})"


def fluctuations_copied(tag: str, a: dict[int, float], b: dict[int, float]) -> str | None:
    """How the two series of a tag show a copy by their turns, or None."""
    if tag not in FLUCTUATING_TAGS:
        return None
    copies = [found for found in turn_correlations(a, b) if _copy(found)]
    return _how(max(copies, key=lambda found: (found[4] is None, abs(found[0])))) if copies else None
