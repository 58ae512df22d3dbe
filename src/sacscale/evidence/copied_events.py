"""Events copied from another rank or run, named by their content: each rank's collector
and clock make its own measured values (phase times, rates, episode returns), so two rank
series of a set, two ranks of one run or ranks of two runs, do not agree on most of them.
A copy with one value changed, or with every wall time moved to fit the other run's
window, still agrees on nearly all of them; counters (env steps, iterations, fault
counts) and constants (the alive reward) agree legitimately and are left out."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

from sacscale.analysis.events import EventFileError, read_run

# The tags a rank measures: its phase times (Time/*), its rates over its own clock and the
# returns of its own collector's episodes.
MEASURED_PREFIXES = ("Time/",)
MEASURED_TAGS = ("Perf/rank_fps", "Perf/total_fps", "Episode/return")
# Over every pair of rank series in the committed sets (408 pairs, 222 to 4,385 shared
# measured values each), at most 0.8% of the values agree exactly (2 of 240); a copy with
# a few values changed agrees on nearly all. Half is far from both.
COPIED_SHARE = 0.5
# Fewer shared values than this say too little to name a copy by (the committed pairs share
# 222 or more).
MIN_SHARED = 20

Values = dict[tuple[str, int], float]


def _measured(tag: str) -> bool:
    return tag.startswith(MEASURED_PREFIXES) or tag in MEASURED_TAGS


def measured_values(series: dict) -> Values:
    """{(tag, step): value} of a rank's measured tags (a step logged twice: its last value)."""
    return {(tag, s.step): s.value for tag, values in series.items() if _measured(tag) for s in values}


def _families(tags: set[str]) -> str:
    named = sorted({tag.split("/")[0] + "/*" if tag.startswith(MEASURED_PREFIXES) else tag for tag in tags})
    return ", ".join(named)


def agreement(a: Values, b: Values) -> tuple[int, int, str]:
    """(values equal, values at (tag, step)s both hold, the tags that agree)."""
    shared = a.keys() & b.keys()
    equal = {key for key in shared if a[key] == b[key]}
    return len(equal), len(shared), _families({tag for tag, _ in equal})


def copied(a: Values, b: Values) -> tuple[int, int, str] | None:
    """The agreement of two rank series that agree on most of their measured values, else None."""
    equal, shared, tags = agreement(a, b)
    return (equal, shared, tags) if shared >= MIN_SHARED and equal > COPIED_SHARE * shared else None


def copied_rank_problems(name: str, by_rank_events: dict | None) -> list[str]:
    """Two ranks of one run that agree on most of their measured values."""
    values = {rank: measured_values(series) for rank, series in (by_rank_events or {}).items()}
    problems = []
    for (first, a), (second, b) in combinations(values.items(), 2):
        found = copied(a, b)
        if found:
            equal, shared, tags = found
            problems.append(f"{name}: tb/rank{first} and tb/rank{second} agree on {equal} of {shared} measured "
                            f"values ({tags}), but each rank collects and times its own: a rank's events copied")
    return problems


def run_values(run_dir: Path) -> dict[int, Values]:
    """Each rank's measured values ({} where the run's events cannot be read: the metrics
    check names why). The reads go through the parsed-file cache the other checks share."""
    try:
        return {rank: measured_values(series) for rank, series in read_run(run_dir).items()}
    except (EventFileError, OSError):
        return {}


def copied_run_problems(by_run: dict[str, dict[int, Values]]) -> list[str]:
    """Ranks of two runs of a set that agree on most of their measured values, named under
    the later run (in the order given)."""
    series = [(run, rank, values) for run, ranks in by_run.items() for rank, values in ranks.items()]
    problems = []
    for (run_a, rank_a, a), (run_b, rank_b, b) in combinations(series, 2):
        found = None if run_a == run_b else copied(a, b)
        if found:
            equal, shared, tags = found
            problems.append(f"{run_b}: runs/{run_a} tb/rank{rank_a} and runs/{run_b} tb/rank{rank_b} agree on "
                            f"{equal} of {shared} measured values ({tags}): another run's events")
    return problems
