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
start), so each sitting's part of the window is held to its own logged rate instead.
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


# Each trainer's margin is about twice the widest disagreement (wall-time rate over the logged
# rate, run and ranks) over its committed runs. This project's trainer: 198 windows of 89 runs
# at 0.9972 to 1.0121, all within 0.005% but h200x1_shared_sync's three runs without gradient
# sync (shared_r1_n2_shared_nosync: rank 0 1.0121, rank 1 0.9972): without it the ranks
# drift apart between log points, and each rank reads its interval's clock before the log
# point's all-reduce of env steps but writes its events after it, so the wait for the other
# rank (up to 0.2 s, unequal at the window's two ends) is in the wall times only. The
# reference trainer (unilab): 5 runs at 0.9714 to 0.9791, its own timing of its intervals.
MARGINS = {"sacscale": Margin("sacscale", 0.025, 0.0121), "unilab": Margin("unilab", 0.06, 0.0286)}


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


def _apart(label: str, rate: float, own: float, span: str, fps_tag: str, margin: Margin) -> list[str]:
    if abs(rate / own - 1) <= margin.tolerance:
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


def _sittings_apart(label: str, window: dict, sitting: tuple[int, int, dict, list[dict]], steps_tag: str,
                    fps_tag: str, margin: Margin) -> list[str]:
    """One sitting's part of the window: its events' rate against the rate the ranks logged.

    A rank reads its interval's clock before the log point's all-reduce and writes its events
    after it, so a rank that waited there for another has that wait in its wall times only;
    where the ranks do not move in step (no learner update to sync them, as after a resume
    until the replay refills), the wait can be most of a short part. The last rank to reach a
    log point waits nothing, so the events' span lies between the shortest and the longest of
    the ranks' own times for the same intervals: the rate is held to that range."""
    k, count, tags, ranks = sitting
    steps = _part(tags, steps_tag, window)
    if len(steps) < 2:
        return []  # no interval of this sitting inside the window
    first, last = steps[0], steps[-1]
    env_steps = last.value - first.value
    span = (f"the window's steps {first.step}..{last.step} in sitting {k} of {count} (the window spans a resume, "
            "whose restart no sitting's logged rate holds: each sitting is held to its own)")
    seconds = [trainer_seconds(r.get(RANK_STEPS, []), r.get(RANK_FPS) or [], first.step, last.step) for r in ranks]
    own = trainer_rate(steps, tags.get(fps_tag) or [], {"first_step": first.step, "last_step": last.step,
                                                       "env_steps": env_steps})
    if own is None or not all(seconds):
        return [f"{label}: no {fps_tag} at every log point of {span}: {UNHELD}"]
    if last.wall_time <= first.wall_time:
        return [f"{label}: no wall time elapses over {span}, the trainer logged {own:,.1f} env steps/s "
                f"({fps_tag}): the events' wall times are not the ones the trainer wrote"]
    rate = env_steps / (last.wall_time - first.wall_time)
    fastest, slowest = env_steps / min(seconds), env_steps / max(seconds)
    nearest = min(max(rate, slowest), fastest)  # the rate of the range nearest the events'
    return _apart(label, rate, nearest, span, fps_tag, margin)


def _agreement(label: str, rate, window: dict | None, rank: int, by_sitting: dict[int, list[dict]],
               tags: tuple[str, str], margin: Margin) -> list[str]:
    steps_tag, fps_tag = tags
    sittings = by_sitting.get(rank, [])
    steps = [s for tags_of in sittings for s in tags_of.get(steps_tag, [])]
    if rate is None or window is None or not steps:
        return []  # no rate: the metrics check names why
    if len(sittings) > 1:
        problems = []
        for k, tags_of in enumerate(sittings):
            ranks = [files[k] for files in by_sitting.values() if len(files) > k]
            problems += _sittings_apart(label, window, (k + 1, len(sittings), tags_of, ranks), steps_tag, fps_tag,
                                        margin)
        return problems
    own = trainer_rate(steps, sittings[0].get(fps_tag) or [], window)
    span = f"the window (steps {window['first_step']}..{window['last_step']})"
    if own is None:
        return [f"{label}: no {fps_tag} at every log point of {span}: {UNHELD}"]
    return _apart(label, rate, own, span, fps_tag, margin)


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
    problems = _agreement(label, metrics.get("steady_env_steps_per_s"), metrics.get("window"), 0, by_sitting,
                          (TOTAL_STEPS, TOTAL_FPS), margin)
    if problems:
        return problems  # rank 0's times are the run's: its rate would repeat it
    for entry in metrics.get("ranks") or []:
        problems += _agreement(f"{label}: tb/rank{entry.get('rank')}", entry.get("steady_env_steps_per_s"),
                               entry.get("window"), entry.get("rank"), by_sitting, (RANK_STEPS, RANK_FPS), margin)
    return problems
