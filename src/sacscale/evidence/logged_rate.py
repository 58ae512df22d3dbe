"""The steady rate against the rate the trainer logged itself.

The steady rate (metrics `steady_env_steps_per_s`) is env steps over the wall-time span of the
measured window, so it rests on the events' wall times alone: times squeezed inside the run's
window raise it and pass every window check. The trainer also logs, at each log point, the
interval's rate from its own clock (`Perf/total_fps` on rank 0, `Perf/rank_fps` on each rank:
the interval's env steps over its `perf_counter` time, sacscale.train.logs). Each interval's
time is then its env steps over that rate; summed over the window's intervals they give the
trainer's own time for the window, and the window's env steps over that time must agree with
the rate from the wall times.

A resumed run's window can span a resume: the restart's time is then in the steady rate but in
no interval the trainer timed (each sitting's clock starts anew, its first interval from its own
start), so each sitting's part of the window is held to its own logged rate instead. Besides
the window, each sitting's whole event span and each of its intervals are held (the page's
event span and tail-mean rate rest on them); in a run of several ranks each to the range of
the ranks' own times (Sitting). The trainer writes each log point's events with the wall time of
the clock read that ends its interval, so a late write moves nothing and is excused nowhere: an
interval made up for by its neighbour (a rate forged in compensating pairs) is still named.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from sacscale.analysis.events import Scalar, read_run_files
from sacscale.analysis.metrics import RANK_FPS, RANK_STEPS, TOTAL_FPS, TOTAL_STEPS, run_events, sitting_count
from sacscale.analysis.reference import is_reference_run


@dataclass(frozen=True)
class Margin:
    trainer: str
    tolerance: float
    widest: float  # the widest disagreement over the trainer's committed runs
    # each interval held on its own too: not the reference trainer's, whose events put at a log
    # point are not of the interval its logged rate timed (its committed runs' differ up to 2x)
    intervals: bool = True


# Each trainer's margin is about twice the widest disagreement (wall-time rate over the logged
# rate, run and ranks) over its committed runs. This project's trainer: 198 windows of 89 runs
# at 0.9972 to 1.0121, all within 0.005% but h200x1_shared_sync's three runs without gradient
# sync (shared_r1_n2_shared_nosync: rank 0 1.0121, rank 1 0.9972): without it the ranks
# drift apart between log points, and each rank reads its interval's clock before the log
# point's all-reduce of env steps but then wrote its events with the time after it, so the wait
# for the other rank (up to 0.2 s, unequal at the window's two ends) is in the wall times only. The
# reference trainer (unilab): 5 runs at 0.9714 to 0.9791, its own timing of its intervals.
MARGINS = {"sacscale": Margin("sacscale", 0.025, 0.0121), "unilab": Margin("unilab", 0.06, 0.0286, False)}
# Any span (an interval, the window, the event span) may also differ by this many seconds: its
# events' time runs between two writes, each a moment after its rank read its clock (the
# all-reduce, the learner's metrics read, the scalars written), which varies by a few ms: up to
# 6.7 ms over the committed runs' intervals, 7.8 ms in a 2-rank CPU run of 0.1 s intervals, 8.1 ms
# in a 1-rank CPU run on a 2-core machine running four busy processes beside it. An error at the
# span's two ends, not a share of it: a short span (a CPU run's) is off by as much as a long one.
SLACK_S = 0.05


def trainer_seconds(steps: list[Scalar], fps: list[Scalar], first_step: int, last_step: int) -> float | None:
    """The trainer's own time for the intervals ending after `first_step` up to `last_step`
    (each interval's env steps over the rate logged at its end); None where an interval's rate
    is missing or not a positive number."""
    logged = {s.step: s.value for s in fps}
    ordered = sorted(steps, key=lambda s: (s.step, s.wall_time))
    seconds = 0.0
    for before, at in zip(ordered, ordered[1:]):
        if not first_step < at.step <= last_step:
            continue
        rate = logged.get(at.step)
        if rate is None or not math.isfinite(rate) or rate <= 0:
            return None
        seconds += (at.value - before.value) / rate
    return seconds


def trainer_rate(steps: list[Scalar], fps: list[Scalar], window: dict) -> float | None:
    """The window's env steps over the trainer's own time for its intervals; None where an
    interval's rate is missing or not a positive number."""
    seconds = trainer_seconds(steps, fps, window["first_step"], window["last_step"])
    return window["env_steps"] / seconds if seconds else None


def _apart(label: str, rate: float, own: float, span: str, fps_tag: str, margin: Margin,
           slack_s: float = 0.0, seconds: float = 0.0) -> list[str]:
    if abs(rate / own - 1) <= margin.tolerance or abs(seconds - seconds * rate / own) <= slack_s:
        return []
    return [f"{label}: the events' times give {rate:,.1f} env steps/s over {span}, the trainer logged "
            f"{own:,.1f} ({fps_tag}, its intervals' own times summed over the window): more than "
            f"{margin.tolerance:.1%} apart ({margin.trainer}'s margin, its committed runs agreeing within "
            f"{margin.widest:.1%}), the events' wall times are not the ones the trainer wrote"]


def _part(tags: dict, steps_tag: str, window: dict) -> list[Scalar]:
    return sorted((s for s in tags.get(steps_tag, []) if window["first_step"] <= s.step <= window["last_step"]),
                  key=lambda s: (s.step, s.wall_time))


# the end of the line for a window whose logged rate is missing: a note of an older set (or one
# made by hand) that logged none; of a set made by this code, a problem (split_notes)
UNHELD = "its rate is not held to the trainer's logged rate"


def _own_seconds(steps: list[Scalar], fps: list[Scalar]) -> dict[int, float | None]:
    """{step: the trainer's own time for the interval ending at that log point (its env steps
    over the rate logged there)}; None where that rate is missing or not a positive number."""
    logged = {s.step: s.value for s in fps}
    out: dict[int, float | None] = {}
    for before, at in zip(steps, steps[1:]):
        rate = logged.get(at.step)
        out[at.step] = (at.value - before.value) / rate if rate is not None and math.isfinite(rate) and rate > 0 \
            else None
    return out


def _summed(own: dict[int, float | None], first_step: int, last_step: int) -> float | None:
    parts = [seconds for step, seconds in own.items() if first_step < step <= last_step]
    return None if not parts or None in parts else sum(parts)


@dataclass(frozen=True)
class Sitting:
    """One rank's series of one sitting, and every rank's own interval times in it: a rank
    reads its interval's clock before the log point's all-reduce and (before the trainer wrote
    the events with that clock read's time) wrote its events with the time after it, so a rank
    that waited there for another has that wait in its wall times only. The
    last rank to reach a log point waits nothing, so the events' time between any two log
    points lies between the shortest and the longest of the ranks' own times for them: the
    events are held to that range (one rank: its own time)."""
    label: str
    where: str  # "" for a run of one sitting, else " in sitting k of n (...)"
    steps: list[Scalar]
    fps_tag: str
    ranks_own: list[dict[int, float | None]]
    margin: Margin

    def held(self, a: Scalar, b: Scalar, span: str, slack_s: float) -> list[str]:
        seconds = self._own(a, b)
        if None in seconds:
            return [f"{self.label}: no {self.fps_tag} at every log point of {span}{self.where}: {UNHELD}"]
        env_steps = b.value - a.value
        fastest, slowest = env_steps / min(seconds), env_steps / max(seconds)
        if b.wall_time <= a.wall_time:
            return [f"{self.label}: no wall time elapses over {span}{self.where}, the trainer logged "
                    f"{slowest:,.1f} env steps/s ({self.fps_tag}): the events' wall times are not the ones the "
                    "trainer wrote"]
        rate = env_steps / (b.wall_time - a.wall_time)
        nearest = min(max(rate, slowest), fastest)  # the rate of the range nearest the events'
        return _apart(self.label, rate, nearest, span + self.where, self.fps_tag, self.margin, slack_s,
                      b.wall_time - a.wall_time)

    def problems(self, window: dict) -> list[str]:
        """The window's part of this sitting, then each interval on its own (every value a figure
        averages), then the sitting's whole event span (the page's event span): the first found."""
        part = _part({"s": self.steps}, "s", window)
        if len(part) >= 2:
            found = self.held(part[0], part[-1], f"the window (steps {part[0].step}..{part[-1].step})", SLACK_S)
            if found:
                return found
        if len(self.steps) < 2:
            return []
        for a, b in zip(self.steps, self.steps[1:]) if self.margin.intervals else ():
            found = self.held(a, b, f"the interval of steps {a.step}..{b.step}", SLACK_S)
            if found:
                return found
        first, last = self.steps[0], self.steps[-1]
        return self.held(first, last, f"the event span (steps {first.step}..{last.step})", SLACK_S)

    def _own(self, a: Scalar, b: Scalar) -> list[float | None]:
        """Each rank's own time from log point `a` to `b`."""
        return [_summed(own, a.step, b.step) for own in self.ranks_own]


def _agreement(label: str, window: dict | None, rank: int, by_sitting: dict[int, list[dict]],
               tags: tuple[str, str], margin: Margin) -> list[str]:
    steps_tag, fps_tag = tags
    sittings = by_sitting.get(rank, [])
    if window is None or not any(tags_of.get(steps_tag) for tags_of in sittings):
        return []  # no rate: the metrics check names why
    problems = []
    for k, tags_of in enumerate(sittings):
        ranks = [files[k] for files in by_sitting.values() if len(files) > k]
        where = "" if len(sittings) == 1 else (
            f" in sitting {k + 1} of {len(sittings)} (the run was resumed, whose restart no sitting's logged rate "
            "holds: each sitting is held to its own)")
        steps = _part(tags_of, steps_tag, {"first_step": -math.inf, "last_step": math.inf})
        own = [_own_seconds(steps, tags_of.get(fps_tag) or [])]
        others = [r for r in ranks if r is not tags_of]
        own += [_own_seconds(_part(r, RANK_STEPS, {"first_step": -math.inf, "last_step": math.inf}),
                             r.get(RANK_FPS) or []) for r in others]
        problems += Sitting(label, where, steps, fps_tag, own, margin).problems(window)
    return problems


def _by_sitting(run_dir: Path) -> dict[int, list[dict[str, list[Scalar]]]]:
    """{rank: [{tag: events} of each sitting]}: a run never resumed as one; a resumed run's
    event files each on its own (each sitting writes one a rank)."""
    if not is_reference_run(run_dir) and sitting_count(run_dir) > 1:
        return {rank: [series for _, series in files] for rank, files in read_run_files(run_dir).items()}
    _, per_rank = run_events(run_dir)
    return {rank: [tags] for rank, tags in per_rank.items()}


def logged_rate_problems(label: str, run_dir: Path, metrics: dict) -> tuple[list[str], list[str]]:
    """(problems, notes): each steady rate of `metrics` (the run's, each rank's) against the
    rate the trainer logged over the same window, within the trainer's own margin; a window
    without the logged rate at every log point is a note."""
    found = _found(label, run_dir, metrics)
    return [line for line in found if not line.endswith(UNHELD)], [line for line in found if line.endswith(UNHELD)]


def _found(label: str, run_dir: Path, metrics: dict) -> list[str]:
    margin = MARGINS["unilab" if is_reference_run(run_dir) else "sacscale"]
    by_sitting = _by_sitting(run_dir)
    problems = _agreement(label, metrics.get("window"), 0, by_sitting, (TOTAL_STEPS, TOTAL_FPS), margin)
    if problems:
        return problems  # rank 0's times are the run's: its rate would repeat it
    for entry in metrics.get("ranks") or []:
        problems += _agreement(f"{label}: tb/rank{entry.get('rank')}", entry.get("window"), entry.get("rank"),
                               by_sitting, (RANK_STEPS, RANK_FPS), margin)
    return problems
