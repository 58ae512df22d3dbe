"""Events copied from another rank or run, named by their content: each rank's collector
and clock make its own measured values (phase times, rates, episode returns), so two rank
series of a set, two ranks of one run or ranks of two runs, do not share most of the values
of any measured tag. A copy still does: with a value changed, with every wall time moved to
fit the other run's window, with values a few float32 ulps off, with one tag family only (the
returns the page's learning figures rest on), or moved to other steps. Each measured tag is
judged on its own, its values matched as multisets whatever their steps; counters (env steps,
iterations, fault counts) and constants (the alive reward) agree legitimately and are left out."""

from __future__ import annotations

import math
from itertools import combinations
from pathlib import Path

from sacscale.analysis.events import EventFileError, read_run

# The tags a rank measures: its phase times (Time/*), its rates over its own clock and the
# returns of its own collector's episodes.
MEASURED_PREFIXES = ("Time/",)
MEASURED_TAGS = ("Perf/rank_fps", "Perf/total_fps", "Episode/return")
# Two values match within this share of the larger: event files hold float32, whose ulp is
# 6e-8 to 1.2e-7 of a value, so a copy nudged by a few ulps (unseen on any page) still
# matches, while two measurements differ far more (two returns of one seed that have
# diverged: 2e-5 apart; rates and phase times: percents).
MATCH_REL = 1e-6
# A tag is copied when more than this share of the shorter series' values are found among
# the other's. Measured over every pair of rank series (within and across runs) of the
# committed sets (4,556 tag pairs, 20 to 367 values each): at most 11.7% (17 of 145
# learner update times); of the stand-in trainer's CPU set, at most 16.7% (2 of 12); of the
# real trainer's CPU sets (14 made by the end-to-end test), 0 of 12 rates. A copy matches
# nearly all. Half is far from both.
COPIED_SHARE = 0.5
# A tag with fewer values than this in either series says too little to name a copy by. The
# CPU preset's ranks log 8 to 12 values of each rate (24 iterations, a value every 2 or 3),
# so a copy there is named. Its ranks log 2 returns each, left out, and rightly: two runs of
# one seed (the configurations of a repeat) collect the same episodes until the learner has
# updated (both returns equal in the real trainer's CPU sets; 2 of 20 in a committed set).
MIN_VALUES = 6
# what the seed alone decides until the learner's first update, logged from then on under
# the learner's own tags (Loss/*; older sets and stand-ins without them: every return kept)
SEED_ALONE_TAGS = ("Episode/return",)
LEARNER_PREFIX = "Loss/"

Values = dict[str, list[float]]


def _measured(tag: str) -> bool:
    return tag.startswith(MEASURED_PREFIXES) or tag in MEASURED_TAGS


def measured_values(series: dict) -> Values:
    """Each measured tag's values, sorted (a step logged twice: its last value). Zeros are
    left out: a phase a rank does not run is logged as 0 on every rank. Returns logged up to
    the learner's first log point are left out too: until the learner has updated, two runs
    of one seed (the configurations of a repeat) collect the same episodes."""
    learning = [s.step for tag, scalars in series.items() if tag.startswith(LEARNER_PREFIX) for s in scalars]
    first_update = min(learning, default=None)
    out = {}
    for tag, scalars in series.items():
        if _measured(tag):
            by_step = {s.step: s.value for s in scalars
                       if not (tag in SEED_ALONE_TAGS and first_update is not None and s.step <= first_update)}
            out[tag] = sorted(v for v in by_step.values() if math.isfinite(v) and v != 0)
    return out


def _close(x: float, y: float) -> bool:
    return abs(x - y) <= MATCH_REL * max(abs(x), abs(y))


def matched(a: list[float], b: list[float]) -> int:
    """How many of a's values pair off with one of b's, each used once (both sorted)."""
    i = j = count = 0
    while i < len(a) and j < len(b):
        if _close(a[i], b[j]):
            count, i, j = count + 1, i + 1, j + 1
        elif a[i] < b[j]:
            i += 1
        else:
            j += 1
    return count


def copied(a: Values, b: Values) -> list[tuple[str, int, int]]:
    """(tag, values matched, values of the shorter series) of each measured tag two rank
    series share most values of; [] when they share none."""
    found = []
    for tag in sorted(a.keys() & b.keys()):
        size = min(len(a[tag]), len(b[tag]))
        if size >= MIN_VALUES:
            count = matched(a[tag], b[tag])
            if count > COPIED_SHARE * size:
                found.append((tag, count, size))
    return found


def _described(found: list[tuple[str, int, int]]) -> str:
    shown = [f"{tag}: {count} of {size}" for tag, count, size in found[:3]]
    more = f" and {len(found) - 3} more tags" if len(found) > 3 else ""
    return ", ".join(shown) + more


def copied_rank_problems(name: str, by_rank_events: dict | None) -> list[str]:
    """Two ranks of one run that share most values of a measured tag."""
    values = {rank: measured_values(series) for rank, series in (by_rank_events or {}).items()}
    problems = []
    for (first, a), (second, b) in combinations(values.items(), 2):
        found = copied(a, b)
        if found:
            problems.append(f"{name}: tb/rank{first} and tb/rank{second} share most measured values of a tag "
                            f"({_described(found)}, whatever the step), but each rank collects and times its own: "
                            "a rank's events copied")
    return problems


def run_values(run_dir: Path) -> dict[int, Values]:
    """Each rank's measured values ({} where the run's events cannot be read: the metrics
    check names why). The reads go through the parsed-file cache the other checks share."""
    try:
        return {rank: measured_values(series) for rank, series in read_run(run_dir).items()}
    except (EventFileError, OSError):
        return {}


def copied_run_problems(by_run: dict[str, dict[int, Values]]) -> list[str]:
    """Ranks of two runs of a set that share most values of a measured tag, named under
    the later run (in the order given)."""
    series = [(run, rank, values) for run, ranks in by_run.items() for rank, values in ranks.items()]
    problems = []
    for (run_a, rank_a, a), (run_b, rank_b, b) in combinations(series, 2):
        found = [] if run_a == run_b else copied(a, b)
        if found:
            problems.append(f"{run_b}: runs/{run_a} tb/rank{rank_a} and runs/{run_b} tb/rank{rank_b} share most "
                            f"measured values of a tag ({_described(found)}, whatever the step): another run's events")
    return problems
