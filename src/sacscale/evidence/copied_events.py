"""Events copied from another rank or run, named by their content: each rank's collector
and clock make its own measured values (phase times, rates, episode returns, lengths, fall
rates and reward terms), so two rank series of a set, two ranks of one run or ranks of two
runs, neither share most of the values of a measured tag nor rise and fall together from
step to step. A copy does one or the other: with a value changed, with every wall time moved
to fit the other run's window, with values a few float32 ulps off, with one tag family only
(the returns the page's learning figures rest on), moved to other steps, scaled or offset
(x(1 + 3e-6): no value equal, the same ups and downs), or of the steady window alone (every
rate figure's input); returns and lengths noised, rounded or moved below what the page shows
keep the other's fluctuations (sacscale.evidence.copied_fluctuations). Each measured tag is
judged on its own, over the whole series, over its last half (analysis.metrics' window) and
by its longest run of the other's values, and every tag pooled (a CPU set logs 5 values a
tag). Counters (env steps, iterations, fault counts), constants (the alive reward) and the
learner's outputs (equal on synced ranks) are left out, and so are the episode values the seed
alone decides (until the learner's first update, from the recorded config) and the lengths the
step alone decides (equal to it: every episode that ended there was its env's first)."""

from __future__ import annotations

import hashlib
import math
from collections import Counter, OrderedDict
from functools import cached_property
from itertools import combinations
from pathlib import Path
from statistics import median

import numpy as np

from sacscale.analysis.events import EventFileError, read_run
from sacscale.evidence.copied_fluctuations import FLUCTUATING_TAGS, fluctuations_copied
from sacscale.evidence.copied_shapes import shape_copied, warped
from sacscale.evidence.learner_start import seed_alone_until

# The tags a rank measures: its phase times (Time/*), its rates over its own clock, and what
# its own collector's episodes give (returns, lengths, fall rates, reward terms).
MEASURED_PREFIXES = ("Time/", "Episode/", "Reward/", "RewardRaw/")
MEASURED_TAGS = ("Perf/rank_fps", "Perf/total_fps")
# What the seed alone decides until the learner's first update (the configurations of a
# repeat share a seed: the same episodes until then), left out up to that step.
SEED_ALONE_PREFIXES = ("Episode/", "Reward/", "RewardRaw/")
# Each env steps once an iteration from the run's start, so an episode that is its env's first
# and ends at iteration s lasts s steps: early in a run, before any env's second episode ends,
# every run logs a length equal to its step (at one iteration a log point), whatever it
# measured. Such a value follows from the step, not from the run, and is left out.
STEP_LENGTH_TAG = "Episode/length"
# Two values match within this share of the larger: event files hold float32, whose ulp is
# 6e-8 to 1.2e-7 of a value, so a copy nudged by a few ulps (unseen on any page) still
# matches, while two measurements differ far more (two returns of one seed that have
# diverged: 2e-5 apart; rates and phase times: percents).
MATCH_REL = 1e-6
# A tag is copied when more than this share of the shorter series' values are found among
# the other's, or of its step-to-step turns follow the other's. Measured over every pair of
# rank series of the committed sets: see docs/evidence.md (Events copied); a copy shares
# nearly all.
COPIED_SHARE = 0.5
# A tag's values are copied when more than this share match (a value both series repeat, a
# level, left out): over the 423 pairs of rank series of the committed sets at most 20.6% do
# (7 of 34 fall rates), half this share; a copy of every other value, or of each value written
# twice, shares 50%.
VALUE_SHARE = 0.4
# ... or when this many consecutive values of one series are found among the other's (a run's
# last values, the page's final return among them): over the same pairs at most 7 are (two
# reference runs' lengths, two-decimal averages of which 19% match by chance; 3 in this
# trainer's runs).
MATCHED_RUN = 10
# A tag with fewer values than this in either series says too little to name a copy by
# alone; it still counts in the pool of every tag.
MIN_VALUES = 6
# A step's turn (the second difference of three consecutive logged values) follows the
# other series' when it is their common multiple within this share of the series' typical
# turn, plus float32 rounding: a scaled or offset copy's turns are the other's x the scale,
# an independent measurement's are its own noise. Over every pair of rank series of the
# committed sets at most 17% of a tag's turns follow at this share (two ranks of a synced run
# run in step: their rates' turns agree to 1e-3, 37% of them, and to 5e-2, all of them).
TURN_TOL = 1e-4
# float32 rounding of a turn: four half-ulps of the largest of its three values
ROUNDING = 4 * 2.0 ** -24
# a series whose typical turn is under this many roundings does not fluctuate measurably
MIN_FLUCTUATION = 100
# Turns a tag needs to be judged by them (the pool, as its values, MIN_VALUES).
MIN_TURNS = 6

Values = dict[str, dict[int, float]]
Stepped = tuple[np.ndarray, np.ndarray]


def _measured(tag: str) -> bool:
    return tag.startswith(MEASURED_PREFIXES) or tag in MEASURED_TAGS


def _step_decided(tag: str, step: int, value: float) -> bool:
    """An episode length equal to its step: the envs' first episodes, the same in every run."""
    return tag == STEP_LENGTH_TAG and value == step


def measured_values(series: dict, seed_alone_to: int | None = None, step_lengths: bool = True) -> Values:
    """Each measured tag's values by step (a step logged twice: its last value), finite and
    non-zero (a phase a rank does not run is logged as 0 on every rank). Episode values up
    to `seed_alone_to` (sacscale.evidence.learner_start.seed_alone_until) are left out: until
    the learner has updated, two runs of one seed collect the same episodes; None (the
    config does not say) keeps them. So are the lengths equal to their step (STEP_LENGTH_TAG)
    where `step_lengths`: this trainer's, whose envs step once an iteration."""
    out = {}
    for tag, scalars in series.items():
        if not _measured(tag):
            continue
        seeded = tag.startswith(SEED_ALONE_PREFIXES) and seed_alone_to is not None
        out[tag] = {s.step: s.value for s in scalars if not (seeded and s.step <= seed_alone_to)}
        out[tag] = {step: v for step, v in out[tag].items()
                    if math.isfinite(v) and v != 0 and not (step_lengths and _step_decided(tag, step, v))}
    return out


class _Series:
    """A tag's values by step, with what every pair it is judged in reads of it, made once
    (a set's series each meet every other)."""

    def __init__(self, values: dict[int, float]):
        self.values = values

    @cached_property
    def stepped(self) -> Stepped:
        """(steps, values) in step order, as arrays."""
        steps = sorted(self.values)
        return np.array(steps, np.int64), np.array([self.values[s] for s in steps], float)

    @cached_property
    def digest(self) -> bytes:
        """The series' steps and values, digested: what every verdict on it depends on."""
        steps, values = self.stepped
        return hashlib.blake2b(steps.tobytes() + values.tobytes(), digest_size=16).digest()

    @cached_property
    def window(self) -> Stepped:
        """The series' last half by step, as the steady window of sacscale.analysis.metrics."""
        steps, values = self.stepped
        return steps[len(steps) // 2:], values[len(steps) // 2:]

    @cached_property
    def by_step(self) -> list[tuple[float, str]]:
        """(value, its _key) in step order."""
        return [(value, _key(value)) for value in self.stepped[1].tolist()]

    @property
    def step_values(self) -> np.ndarray:
        return self.stepped[1]

    @cached_property
    def keys(self) -> Counter:
        """How often each value's _key occurs."""
        return Counter(key for _, key in self.by_step)

    @cached_property
    def ordered_keyed(self) -> list[tuple[float, str]]:
        """(value, its _key), sorted."""
        return sorted(self.by_step)

    @cached_property
    def ordered(self) -> list[float]:
        return [value for value, _ in self.ordered_keyed]

    def levels_out(self, levels: set[str]) -> list[float]:
        """The values sorted, the levels left out."""
        return [value for value, key in self.ordered_keyed if key not in levels] if levels else self.ordered


def _key(value: float) -> str:
    """The value to 6 significant digits, so that a level written in either precision, or
    nudged by an ulp, is one key."""
    return f"{value:.6g}"


def _levels(a: _Series, b: _Series) -> set[str]:
    """The values both series hold more than once: a level (a fall rate of 1, a constant
    reward term) any run may show, not a measurement. A value one series alone repeats is
    still judged: a copy written twice is a copy."""
    held_b = b.keys
    return {v for v, count in a.keys.items() if count > 1 and held_b.get(v, 0) > 1}


def _found_each(values: np.ndarray, theirs: list[float]) -> list[bool]:
    """_found of each value, at once."""
    ordered = np.asarray(theirs, float)
    at = np.searchsorted(ordered, values - np.abs(values) * MATCH_REL, side="left")
    inside = at < len(ordered)
    nearest = ordered[np.where(inside, at, 0)] if len(ordered) else np.zeros(len(values))
    close = np.abs(values - nearest) <= MATCH_REL * np.maximum(np.abs(values), np.abs(nearest))
    return (inside & close).tolist()


def matched_run(a: _Series, theirs: list[float], levels: set[str]) -> int:
    """The most consecutive values of a (by step, a value held at consecutive steps counted
    once) each found among `theirs` (sorted, levels out)."""
    longest = run = 0
    previous = None
    for (value, key), found in zip(a.by_step, _found_each(a.step_values, theirs)):
        if value != previous:
            run = run + 1 if key not in levels and found else 0
            longest, previous = max(longest, run), value
    return longest


def matched(a: list[float], b: list[float]) -> int:
    """How many of a's values pair off with one of b's, each used once (both sorted)."""
    i = j = count = 0
    while i < len(a) and j < len(b):
        x, y = a[i], b[j]
        if abs(x - y) <= MATCH_REL * max(abs(x), abs(y)):  # within MATCH_REL of the larger
            count, i, j = count + 1, i + 1, j + 1
        elif x < y:
            i += 1
        else:
            j += 1
    return count


def _turns(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(turns, their float32 rounding) at each inner value."""
    rounding = ROUNDING * np.maximum(np.maximum(np.abs(values[:-2]), np.abs(values[1:-1])), np.abs(values[2:]))
    return values[:-2] - 2 * values[1:-1] + values[2:], rounding


def _on_common_steps(a: Stepped, b: Stepped) -> tuple[np.ndarray, np.ndarray]:
    """Each series' values at the steps both log, in step order."""
    (steps_a, values_a), (steps_b, values_b) = a, b
    if np.array_equal(steps_a, steps_b):
        return values_a, values_b
    common = np.intersect1d(steps_a, steps_b, assume_unique=True)
    return values_a[np.isin(steps_a, common)], values_b[np.isin(steps_b, common)]


def followed_turns(a: Stepped, b: Stepped) -> tuple[int, int]:
    """(turns of b that are one common multiple of a's, turns judged) over the steps both
    log (each series as (steps, values) in step order): a turn both series make 0 (a level
    held) says nothing and is not judged, nor is a series that does not fluctuate above its
    rounding."""
    (x, x_rounding), (y, y_rounding) = (_turns(values) for values in _on_common_steps(a, b))
    judged = (x != 0) | (y != 0)
    x, x_rounding, y, y_rounding = x[judged], x_rounding[judged], y[judged], y_rounding[judged]
    both = (x != 0) & (y != 0)
    if not both.any():
        return 0, len(x)
    scale, typical = median((y[both] / x[both]).tolist()), median(np.abs(y).tolist())
    if typical <= MIN_FLUCTUATION * median(y_rounding.tolist()):
        return 0, 0
    close = np.abs(y - scale * x) <= TURN_TOL * typical + abs(scale) * x_rounding + y_rounding
    return int(close.sum()), len(x)


def _share(count: int, size: int, least: int, share: float = COPIED_SHARE) -> bool:
    return size >= least and count > share * size


def _values_copied(a: _Series, b: _Series, pooled: dict) -> tuple[str, int, int] | None:
    """A tag's two series sharing more than VALUE_SHARE of their values, or a run of
    MATCHED_RUN consecutive values one of them holds of the other's: (how, count, of how many).
    The values matched, of how many, go in `pooled["values"]` for _pooled."""
    levels = _levels(a, b)
    ours, theirs = a.levels_out(levels), b.levels_out(levels)
    size = min(len(ours), len(theirs))
    pooled["values"] = (count := matched(ours, theirs)), size
    if _share(count, size, MIN_VALUES, VALUE_SHARE):
        return "", count, size
    for series, other in ((a, theirs), (b, ours)):
        if (run := matched_run(series, other, levels)) >= MATCHED_RUN:
            return " (consecutive values)", run, len(series.values)
    return None


def _tag_copied(a: _Series, b: _Series, pooled: dict) -> tuple[str, int, int] | None:
    """How a tag's two series show a copy (what, count, of how many), or None; what _pooled
    reads of the tag goes in `pooled`."""
    if (found := _values_copied(a, b, pooled)) is not None:
        return found
    for where, (x, y) in (("", (a.stepped, b.stepped)), (" in the last half", (a.window, b.window))):
        count, size = followed_turns(x, y)
        pooled.setdefault("turns", (count, size))
        if min(len(x[0]), len(y[0])) >= MIN_VALUES and _share(count, size, MIN_TURNS):
            return f" (step-to-step turns{where})", count, size
    return None


def _fluctuations_copied(tag: str, a: dict[int, float], b: dict[int, float],
                         across_runs: bool = False) -> tuple[str, None, None] | None:
    """A copy noised, rounded, filtered or moved below what the page shows, by its turns'
    correlation (sacscale.evidence.copied_fluctuations), over all turns and in windows; between
    runs, read through a moving lag or blended in (copied_shapes.warped)."""
    how = fluctuations_copied(tag, a, b)
    if how is None and tag in FLUCTUATING_TAGS:
        how = shape_copied(a, b) or (warped(a, b) if across_runs else None)
    return (how, None, None) if how is not None else None


def _pooled(by_tag: list[dict]) -> tuple[str, int, int] | None:
    """Every measured tag pooled, for series too short to judge alone: their values equal, or
    their turns followed (each tag's counts as _tag_copied found them)."""
    for what, part in (("values", "values"), ("step-to-step turns", "turns")):
        count, size = sum(tag[part][0] for tag in by_tag), sum(tag[part][1] for tag in by_tag)
        if _share(count, size, MIN_VALUES, VALUE_SHARE if what == "values" else COPIED_SHARE):
            return f"every measured tag's {what}", count, size
    return None


Prepared = dict[str, _Series]


def _prepared(values: Values) -> Prepared:
    return {tag: _Series(series) for tag, series in values.items()}


# Each tag's verdict by the two series' content: the same pair of series (a set verified
# again, or a copy of it) is judged once a process, not once a verify. Entries are small.
_VERDICTS: OrderedDict[tuple, tuple] = OrderedDict()
_VERDICTS_KEPT = 1 << 15


def _tag_verdict(tag: str, a: _Series, b: _Series, across_runs: bool) -> tuple[tuple | None, dict]:
    """(how the tag's two series show a copy or None, what _pooled reads of the tag)."""
    key = (tag, a.digest, b.digest, across_runs)
    if key not in _VERDICTS:
        pooled: dict = {}
        hit = _tag_copied(a, b, pooled) or _fluctuations_copied(tag, a.values, b.values, across_runs)
        _VERDICTS[key] = hit, pooled
        if len(_VERDICTS) > _VERDICTS_KEPT:
            _VERDICTS.popitem(last=False)
    _VERDICTS.move_to_end(key)
    hit, pooled = _VERDICTS[key]
    return hit, dict(pooled)


def _copied(a: Prepared, b: Prepared, across_runs: bool) -> list[tuple[str, int | None, int | None]]:
    found, by_tag = [], []
    for tag in sorted(a.keys() & b.keys()):
        hit, pooled = _tag_verdict(tag, a[tag], b[tag], across_runs)
        by_tag.append(pooled)
        if hit is not None:
            found.append((tag + hit[0], hit[1], hit[2]))
    if not found and (pooled_hit := _pooled(by_tag)) is not None:
        found.append(pooled_hit)
    return found


def copied(a: Values, b: Values, across_runs: bool = False) -> list[tuple[str, int | None, int | None]]:
    """(tag and how, values or turns matched, of how many) of each measured tag two rank
    series (of two runs: `across_runs`) share most values or turns of, else of every tag
    pooled; [] when none."""
    return _copied(_prepared(a), _prepared(b), across_runs)


def _described(found: list[tuple[str, int | None, int | None]]) -> str:
    shown = [f"{tag}: {count} of {size}" if count is not None else tag for tag, count, size in found[:3]]
    more = f" and {len(found) - 3} more tags" if len(found) > 3 else ""
    return ", ".join(shown) + more


def copied_rank_problems(name: str, by_rank_events: dict | None, config=None) -> list[str]:
    """Two ranks of one run that share most values or turns of a measured tag; `config`:
    train_meta.json's, which says when the learner first updates."""
    until = seed_alone_until(config)
    values = {rank: _prepared(measured_values(series, until)) for rank, series in (by_rank_events or {}).items()}
    problems = []
    for (first, a), (second, b) in combinations(values.items(), 2):
        found = _copied(a, b, across_runs=False)
        if found:
            problems.append(f"{name}: tb/rank{first} and tb/rank{second} share most measured values of a tag, "
                            f"whatever the step, or follow its step-to-step turns ({_described(found)}), but each "
                            "rank collects and times its own: a rank's events copied")
    return problems


def run_values(run_dir: Path, config=None) -> dict[int, Values]:
    """Each rank's measured values ({} where the run's events cannot be read: the metrics
    check names why); `config` as copied_rank_problems'. The reads go through the
    parsed-file cache the other checks share."""
    until = seed_alone_until(config)
    try:
        return {rank: measured_values(series, until) for rank, series in read_run(run_dir).items()}
    except (EventFileError, OSError):
        return {}


def copied_run_problems(by_run: dict[str, dict[int, Values]]) -> list[str]:
    """Ranks of two runs of a set that share most values or turns of a measured tag, named
    under the later run (in the order given)."""
    series = [(run, rank, _prepared(values)) for run, ranks in by_run.items() for rank, values in ranks.items()]
    problems = []
    for (run_a, rank_a, a), (run_b, rank_b, b) in combinations(series, 2):
        found = [] if run_a == run_b else _copied(a, b, across_runs=True)
        if found:
            problems.append(f"{run_b}: runs/{run_a} tb/rank{rank_a} and runs/{run_b} tb/rank{rank_b} share most "
                            f"measured values of a tag, whatever the step, or follow its step-to-step turns "
                            f"({_described(found)}): another run's events")
    return problems
