"""A copy named by its fluctuations: two ranks' or two runs' episode returns and lengths
share a learning trend (one policy, or one seed's), but each collector's episodes scatter
around it on their own, so their step-to-step turns (second differences, which take out the
trend) are not the other's. A copy keeps the other's turns however it is changed below what a
page shows: noised by a few parts in 1e4, rounded to the page's two decimals, scaled, offset,
negated around its trend, moved by any number of log points, or passed through a short linear
filter (a moving average of up to 5 points, or mirrored around one: the filter's turns are the
filtered turns). Judged by the Pearson correlation (its size, either sign) of one series' turns
with the other's, filtered, at every lag that leaves enough turns: over all the turns both
series make, and over every window of WINDOW_TURNS consecutive ones (a copy of part of a run)."""

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


def lag_correlations(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """r of the turns either series makes at every lag -(len(x) - 1) .. len(y) - 1 (0 where
    fewer than MIN_TURNS are made by both)."""
    pairs, both, neither, sx, sy, sxx, syy, sxy = _lagged_sums(x, y)
    return np.where(both >= MIN_TURNS, _r(pairs - neither, sx, sy, sxx, syy, sxy), 0.0)


def _whole(x: np.ndarray, y: np.ndarray) -> tuple[float, int, int]:
    """(r, lag, turns) at the lag where |r| is highest, over the turns either series makes,
    at lags where at least MIN_TURNS are made by both."""
    pairs, both, neither, sx, sy, sxx, syy, sxy = _lagged_sums(x, y)
    n = pairs - neither
    r = np.where(both >= MIN_TURNS, _r(n, sx, sy, sxx, syy, sxy), 0.0)
    best = int(np.abs(r).argmax())
    return float(r[best]), best - (len(x) - 1), int(round(n[best]))


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


def _judged(a: np.ndarray, b: np.ndarray) -> list[tuple[float, int, int, str | None, int | None]]:
    """(r, lag, turns, filter, window start or None) for one series against the other's
    filtered turns: the best over all turns and the best window, at every lag."""
    found = []
    for described, kernel in FILTERS:
        filtered, centre = np.convolve(b, kernel, mode="valid"), (len(kernel) - 1) // 2
        if min(len(a), len(filtered)) < MIN_TURNS:
            continue
        r, lag, count = _whole(a, filtered)
        found.append((r, lag + centre, count, described, None))
        if min(len(a), len(filtered)) >= WINDOW_TURNS:
            r, lag, start = windowed(a, filtered)
            found.append((r, lag + centre, WINDOW_TURNS, described, start))
    return found


def turn_correlations(a: dict[int, float], b: dict[int, float]) -> list[tuple[float, int, int, str | None, int | None]]:
    """Every filter's best correlations (r, lag, turns, filter, window start) of the two
    series' turns over the steps both log, each series against the other filtered; the lag
    counts log points of b after a's."""
    steps = sorted(a.keys() & b.keys())
    if len(steps) < MIN_TURNS + 2:
        return []
    x, y = turns(np.array([a[s] for s in steps], float)), turns(np.array([b[s] for s in steps], float))
    forward = _judged(x, y)
    backward = [(r, -lag, n, filtered, start) for r, lag, n, filtered, start in _judged(y, x) if filtered]
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
