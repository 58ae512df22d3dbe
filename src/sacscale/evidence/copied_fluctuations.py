"""A copy named by its fluctuations: two ranks' or two runs' episode returns and lengths
share a learning trend (one policy, or one seed's), but each collector's episodes scatter
around it on their own, so their step-to-step turns (second differences, which take out the
trend) are not the other's. A copy keeps the other's turns however it is changed below what a
page shows: noised by a few parts in 1e4, rounded to the page's two decimals, scaled, offset,
or moved by a log point or two. Judged by the Pearson correlation of the two series' turns over
the steps both log, at a lag of -2..2 log points."""

from __future__ import annotations

import math

# The tags whose scatter is each rank's own: its envs' episodes. Phase times, rates and the
# reward terms are left out: ranks of a synced run wait for each other (their times and rates
# turn together, correlation up to 1.0) and share one policy (their reward terms' turns
# correlate up to 1.0); fall rates hold levels any two runs may share (up to 1.0).
FLUCTUATING_TAGS = ("Episode/return", "Episode/length")
# Turns correlated at least this much are a copy's. Over every pair of rank series of the
# committed sets (within and across runs, every lag) returns' turns correlate at most 0.984
# and lengths' 0.995 (runs of one seed share their envs' commands and resets); a copy noised
# by 3e-4 of its values or rounded to 2 decimals keeps at least 0.99996: see docs/evidence.md.
COPY_CORRELATION = 0.9998
LAGS = range(-2, 3)
# turns (both series' turn non-zero) a correlation needs to say anything
MIN_TURNS = 6


def _turns(values: list[float]) -> list[float]:
    return [values[i - 1] - 2 * values[i] + values[i + 1] for i in range(1, len(values) - 1)]


def _correlation(x: list[float], y: list[float]) -> float | None:
    """Pearson's r of x and y, None where either does not vary."""
    mean_x, mean_y = math.fsum(x) / len(x), math.fsum(y) / len(y)
    dx, dy = [v - mean_x for v in x], [v - mean_y for v in y]
    spread = math.sqrt(math.fsum(v * v for v in dx) * math.fsum(v * v for v in dy))
    return math.fsum(u * v for u, v in zip(dx, dy)) / spread if spread > 0 else None


def _lagged(a: list[float], b: list[float], lag: int) -> tuple[list[float], list[float]]:
    """a's values against b's `lag` log points later."""
    return (a[:len(a) - lag], b[lag:]) if lag >= 0 else (a[-lag:], b[:len(b) + lag])


def turn_correlation(a: dict[int, float], b: dict[int, float]) -> tuple[float, int, int] | None:
    """(the highest correlation of the two series' turns, at which lag, over how many turns)
    over the steps both log, or None where no lag gives MIN_TURNS turns both make."""
    steps = sorted(a.keys() & b.keys())
    best = None
    for lag in LAGS:
        x, y = _lagged([a[s] for s in steps], [b[s] for s in steps], lag)
        pairs = [(u, v) for u, v in zip(_turns(x), _turns(y)) if u or v]
        if sum(1 for u, v in pairs if u and v) < MIN_TURNS:
            continue
        r = _correlation([u for u, _ in pairs], [v for _, v in pairs])
        if r is not None and (best is None or r > best[0]):
            best = (r, lag, len(pairs))
    return best


def fluctuations_copied(tag: str, a: dict[int, float], b: dict[int, float]) -> str | None:
    """How the two series of a tag show a copy by their turns, or None."""
    if tag not in FLUCTUATING_TAGS or (found := turn_correlation(a, b)) is None or found[0] < COPY_CORRELATION:
        return None
    r, lag, count = found
    apart = f", {abs(lag)} log point{'s' if abs(lag) > 1 else ''} apart" if lag else ""
    return f" (step-to-step turns correlated at {math.floor(r * 1e5) / 1e5:.5f} over {count} turns{apart})"
