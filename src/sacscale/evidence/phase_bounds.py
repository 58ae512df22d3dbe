"""Each phase time a traced run logs, held to the time of the interval it describes.

A traced rank logs at each log point each phase's mean ms per iteration over the interval
since the previous one (`Time/*`, sacscale.train.logs). The interval's own time per iteration
is 1000 x num_envs / `Perf/rank_fps`: the rate is the interval's env steps (num_envs a rank an
iteration) over the interval's time on the same clock. What the phases can add up to
(sacscale.train.rank, sacscale.collect.collector):

- the learner's phases (wait, h2d, update) are consecutive parts of each learner iteration,
  timed inside the interval: their sum is at most the interval's time per iteration;
- the collector's main-thread phases (env step, action select, replay write, weight sync) run
  one after another on its one thread, in its own process. It fills one of two slots while the
  learner reads the other, so the work on the slots the learner takes in an interval began at
  the earliest when the learner began the iteration two before the interval's first: their sum
  is at most the interval's time plus that of those two iterations (the whole intervals that
  hold them; none in a sitting's first interval, whose clock starts before the collector);
- the pool's physics: the halves never step at once, so the pool is held to the same bound;
- the physics wait is a part of the env step.

Over the committed sets' traced runs (14 sets, 98 rank files, 7,476 intervals) the learner's
sum reaches 0.9999 of its bound, the collector's 0.93, the pool's 0.60, and the physics wait
0.975 of the env step; the margin allows only float32 storage (TOLERANCE). A phase of the page's
phase table multiplied so that it no longer fits its interval is named; so is a negative one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import median

from sacscale.analysis.events import Scalar
from sacscale.evidence.binding import first_record_time
from sacscale.evidence.log_cadence import CLOCK_SLACK_S, recorded_sittings
from sacscale.train.log_tags import COLLECTOR_PHASES, LEARNER_PHASES

RANK_STEPS, RANK_FPS = "Perf/rank_env_steps", "Perf/rank_fps"
TOTAL_STEPS, TOTAL_FPS = "Perf/total_env_steps", "Perf/total_fps"
LEARNER = tuple(f"Time/{phase}" for phase in LEARNER_PHASES)
# the collector's main thread; the pool's physics and the part of it the thread waited for apart
PHYSICS, PHYSICS_WAIT = "Time/collector_physics_ms", "Time/collector_physics_wait_ms"
COLLECTOR = tuple(tag for tag in (f"Time/collector_{phase}" for phase in COLLECTOR_PHASES)
                  if tag not in (PHYSICS, PHYSICS_WAIT))
ENV_STEP = COLLECTOR[0]
TOLERANCE = 0.01  # float32 storage of the times and the rate; the measured phases leave far more
# The learner's phases fill its iteration from below too (measured: docs/evidence.md)
LEARNER_MEDIAN_FLOOR = 0.6
LEAD_ITERATIONS = 2  # the collector's work on a slot began at most this many iterations early
CANNOT = "the phase times are not the ones the trainer measured"


@dataclass(frozen=True)
class Interval:
    step: int
    iterations: int
    ms_per_iteration: float  # the interval's own time per iteration
    why: str  # where that time comes from
    lead_ms: float  # the whole intervals holding the iterations before it the collector may have worked in
    values: dict[str, float]  # {Time/* tag: ms per iteration}
    elapsed_ms: float = math.inf  # the sitting's time from its clock's start to the interval's end


def _values_at(series: dict[str, list[Scalar]]) -> dict[int, dict[str, float]]:
    out: dict[int, dict[str, float]] = {}
    for tag, values in series.items():
        if tag.startswith("Time/"):
            for s in values:
                out.setdefault(s.step, {})[tag] = s.value
    return out


def intervals(series: dict[str, list[Scalar]], num_envs: int, from_iteration: int) -> list[Interval]:
    """The file's log intervals with a positive logged rate, each with its phase times."""
    fps = {s.step: s.value for s in series.get(RANK_FPS, [])}
    phases = _values_at(series)
    steps = sorted({s.step for s in series.get(RANK_STEPS, [])})
    out, earlier, before = [], [], from_iteration
    for step in steps:
        iterations, before = step - before, step
        rate = fps.get(step)
        if iterations <= 0 or rate is None or not math.isfinite(rate) or rate <= 0:
            earlier.append((max(iterations, 0), math.inf))  # no bound from here on back
            continue
        ms = 1e3 * num_envs / rate
        why = f"num_envs {num_envs} over its {RANK_FPS} {rate:,.1f}"
        elapsed = sum(spent for _, spent in earlier) + ms * iterations
        out.append(Interval(step, iterations, ms, why, _lead_ms(earlier), phases.get(step, {}), elapsed))
        earlier.append((iterations, ms * iterations))
    return out


def _lead_ms(earlier: list[tuple[int, float]]) -> float:
    """The whole time of the latest intervals that hold LEAD_ITERATIONS iterations (fewer where
    the sitting began: its collector started after its first interval's clock)."""
    total, held = 0.0, 0
    for iterations, ms in reversed(earlier):
        if held >= LEAD_ITERATIONS:
            break
        total, held = total + ms, held + iterations
    return total


def _ms(value: float) -> str:
    return f"{value:,.3f} ms"


def _short(tags: tuple[str, ...]) -> str:
    return ", ".join(tag.removeprefix("Time/").removesuffix("_ms") for tag in tags)


def _learner(at: Interval) -> str | None:
    logged = [t for t in LEARNER if t in at.values]
    total = sum(at.values[t] for t in logged)
    if not logged or total <= at.ms_per_iteration * (1 + TOLERANCE):
        return None
    largest = max(logged, key=at.values.get)
    return (f"logs {largest} {_ms(at.values[largest])} an iteration at step {at.step} (the learner's phases "
            f"{_short(LEARNER)}: {_ms(total)} in all), but the interval ending there took {_ms(at.ms_per_iteration)} "
            f"an iteration ({at.why}): they are parts of the learner's iteration, so their sum "
            f"cannot exceed it")


def _collector(at: Interval) -> str | None:
    bound = at.ms_per_iteration + at.lead_ms / at.iterations
    logged = [t for t in COLLECTOR if t in at.values]
    total = sum(at.values[t] for t in logged)
    physics = at.values.get(PHYSICS)
    what = None
    if logged and total > bound * (1 + TOLERANCE):
        what = f"the collector's main-thread phases ({_short(COLLECTOR)}) at {_ms(total)} an iteration in all"
    elif physics is not None and physics > bound * (1 + TOLERANCE):
        what = f"{PHYSICS} {_ms(physics)} an iteration"
    if what is None:
        return None
    return (f"logs {what} at step {at.step}, but the interval ending there took {_ms(at.ms_per_iteration)} "
            f"an iteration ({at.why}), {_ms(bound)} with the {LEAD_ITERATIONS} iterations "
            f"before it in which the collector may have begun its slots: the collector cannot work longer")


def _physics_wait(at: Interval) -> str | None:
    wait, step = at.values.get(PHYSICS_WAIT), at.values.get(ENV_STEP)
    if wait is None or step is None or wait <= step * (1 + TOLERANCE):
        return None
    return (f"logs {PHYSICS_WAIT} {_ms(wait)} at step {at.step}, above its {ENV_STEP} {_ms(step)}, of which the "
            "wait is a part")


def _negative(at: Interval) -> str | None:
    below = sorted(tag for tag, value in at.values.items() if not value >= 0)
    if not below:
        return None
    return f"logs {below[0]} {at.values[below[0]]!r} at step {at.step}: a time is not negative"


def _learner_share(at: Interval) -> float | None:
    logged = [at.values[t] for t in LEARNER if t in at.values]
    return sum(logged) / at.ms_per_iteration if logged else None


def _saves(at: Interval, checkpoint_every: int) -> bool:
    """Whether a checkpoint was saved in the interval (outside the learner's phases)."""
    return checkpoint_every > 0 and at.step // checkpoint_every > (at.step - at.iterations) // checkpoint_every


def _learner_median_short(found: list[Interval], checkpoint_every: int) -> str | None:
    """The learner's phases fill its iteration but for the log point's work; an interval that
    saves a checkpoint is left out (a save may take longer than many iterations)."""
    shares = [share for at in found if not _saves(at, checkpoint_every) and (share := _learner_share(at)) is not None]
    if not shares or median(shares) >= LEARNER_MEDIAN_FLOOR:
        return None
    return (f"logs the learner's phases ({_short(LEARNER)}) at a median {median(shares):.0%} of their intervals' "
            f"time (over {len(shares)} intervals, by its {RANK_FPS}), but they fill the learner's iteration: "
            f"a median of at least {LEARNER_MEDIAN_FLOOR:.0%} in every rank file measured (docs/evidence.md)")


def _collector_overrun(found: list[Interval]) -> str | None:
    """The collector's main thread (and the pool's physics) worked on the slots of the sitting's
    intervals so far within the sitting's time so far: one thread, started after the clock."""
    spent: dict[str, float] = {}
    for at in found:
        for what, tags in (("the collector's main-thread phases", COLLECTOR), (PHYSICS, (PHYSICS,))):
            logged = [at.values[t] for t in tags if t in at.values]
            spent[what] = spent.get(what, 0.0) + sum(logged) * at.iterations
            if spent[what] > at.elapsed_ms * (1 + TOLERANCE):
                return (f"logs {what} at {_ms(spent[what])} in all up to step {at.step}, but the sitting took "
                        f"{_ms(at.elapsed_ms)} up to there by its logged rates: one thread cannot work longer "
                        "than the time it had")
    return None


def interval_problems(found: list[Interval], checkpoint_every: int = 0) -> list[str]:
    """The file's first phase time that does not fit its interval (with how many more do)."""
    lines = [line for at in found for line in (_negative(at), _learner(at), _collector(at), _physics_wait(at))
             if line]
    lines += [line for line in (_learner_median_short(found, checkpoint_every), _collector_overrun(found)) if line]
    if not lines:
        return []
    more = f" (and at {len(lines) - 1} more interval(s) or phase(s))" if len(lines) > 1 else ""
    return [f"{lines[0]}: {CANNOT}{more}"]


def _count(meta: dict, key: str) -> int | None:
    config = meta.get("config") if isinstance(meta.get("config"), dict) else {}
    value = config.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _first_step(series: dict[str, list[Scalar]]) -> float:
    return min((s.step for s in series.get(RANK_STEPS, [])), default=math.inf)


# The first interval's logged time (its perf_counter clock) against the wall time since its event
# file was created, a moment before that clock started: the committed runs' first intervals (5 to
# 56 s) leave 0.8 ms or more of it; this allows the two clocks' rounding, TOLERANCE their drift
CREATED_SLACK_S = 0.05


def _anchor(started, created: float | None) -> tuple[float, float, str] | None:
    """The latest recorded moment before the sitting's first interval's clock started, and what
    records it: the trainer opens its event writer (the file's first record) after its setup,
    just before that clock starts, so its creation bounds the interval far closer than the
    sitting's start_time, which may move with run.json's within the start's graces. (time,
    its slack, what records it)."""
    anchors = []
    if isinstance(started, (int, float)) and not isinstance(started, bool) and math.isfinite(started):
        anchors.append((started, CLOCK_SLACK_S, "the sitting's start_time (train_meta.json)"))
    if created is not None and math.isfinite(created):
        anchors.append((created, CREATED_SLACK_S, "its event file was created (its first record)"))
    return max(anchors, key=lambda anchor: anchor[0] - anchor[1], default=None)


def _first_interval(series: dict[str, list[Scalar]], from_iteration: int, started, created: float | None = None
                    ) -> str | None:
    """The sitting's first interval, which no earlier event bounds (sacscale.evidence.logged_rate
    holds each later one to its events' times) and on which every elapsed time here rests: its
    clock starts after the sitting's start_time and its event file's creation (_anchor), so its
    logged time is at most the time from there to its log point's events."""
    anchor = _anchor(started, created)
    if anchor is None:
        return None  # an older set's record: its window is not recorded
    before, slack, what = anchor
    for steps_tag, fps_tag in ((RANK_STEPS, RANK_FPS), (TOTAL_STEPS, TOTAL_FPS)):
        counts = sorted(series.get(steps_tag, []), key=lambda s: (s.step, s.wall_time))
        rate = {s.step: s.value for s in series.get(fps_tag, [])}.get(counts[0].step) if counts else None
        if rate is None or not math.isfinite(rate) or rate <= 0 or counts[0].step <= from_iteration:
            continue  # a missing rate is the required tags' to name
        first = counts[0]
        env_steps = first.value * (first.step - from_iteration) / first.step  # the counts grow alike each iteration
        seconds, had = env_steps / rate, first.wall_time - before
        if seconds > (had + slack) * (1 + TOLERANCE):
            return (f"logs {fps_tag} {rate:,.1f} at step {first.step}, the sitting's first log point: "
                    f"{env_steps:,.0f} env steps in {seconds:,.1f} s, but its events there were written "
                    f"{had:,.1f} s after {what}, before which the interval's clock had not started: "
                    f"the logged rate is not the one the trainer measured")
    return None


def phase_time_problems(name: str, meta: dict, files: dict | None) -> list[str]:
    """Each rank's phase times against its intervals (files: {rank: [(path, {tag: [Scalar]})]},
    one file a sitting); the first rank that shows a problem is named (the others would repeat
    a copied series)."""
    num_envs, checkpoint_every = _count(meta, "num_envs"), _count(meta, "checkpoint_every") or 0
    if not files or num_envs is None:
        return []  # no events, or no num_envs: named by the checks of those
    sittings, _ = recorded_sittings(meta)
    for rank, parts in sorted(files.items()):
        ordered = sorted(parts, key=lambda part: _first_step(part[1]))
        matched = len(sittings) == len(ordered)
        starts = [(s.from_iteration, s.start_time) for s in sittings] if matched else [(0, None)] * len(ordered)
        for k, ((path, series), (start, started)) in enumerate(zip(ordered, starts)):
            which = f"tb/rank{rank}" + (f" (sitting {k + 1} of {len(ordered)})" if len(ordered) > 1 else "")
            first = _first_interval(series, start, started, first_record_time(path))
            found = [first] if first else interval_problems(intervals(series, num_envs, start), checkpoint_every)
            if found:
                return [f"{name}: {which} {line}" for line in found]
    return []
