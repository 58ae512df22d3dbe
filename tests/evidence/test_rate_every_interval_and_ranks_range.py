"""Every interval of a run held to its logged rate, each to the range of its ranks' own times:
a 2-rank run whose ranks do not move in step (its learner never starts: no gradient all-reduce)
was called forged, its events 4% from rank 0's own time, though a rank's wait at a log point's
all-reduce is in its wall times only; and the page's tail-mean rate (a value logged at the
window's first step) and event span (the times before the window) were held by nothing."""

import json
import re

from event_times import event_file, retimed, revalued
from set_copies import copy_committed_set, remake_manifest
from synthetic_runs import write_events

from sacscale.analysis.events import read_event_file
from sacscale.analysis.metrics import analyze_run
from sacscale.evidence.logged_rate import logged_rate_problems
from sacscale.evidence.verify import verify

SET = "h200x1_shared_short"
RUN = "shared_r1_n1_pool7"
ENVS = 16  # per rank and iteration


def _unsynced_run(tmp_path, waits_of_rank0, waits_of_rank1):
    """A 2-rank run of 12 log points, one iteration each: each rank reads its clock (`now`), then
    waits at the all-reduce for the other and writes its events when both are there."""
    run = tmp_path / "run"
    now = [[0.1 * k + w for k, w in enumerate(waits)] for waits in (waits_of_rank0, waits_of_rank1)]
    # each rank's clock read, the wait it did not have at the point: the later one's release
    released = [max(a, b) + 0.001 for a, b in zip(*now)]
    for rank, clock in enumerate(now):
        scalars = {"Perf/rank_env_steps": [], "Perf/rank_fps": []}
        if rank == 0:
            scalars.update({"Perf/total_env_steps": [], "Perf/total_fps": []})
        for k in range(1, len(clock)):
            start = clock[k - 1] if k > 1 else clock[0]
            seconds = clock[k] - start if k > 1 else 0.1
            step, wall = k, 1000.0 + released[k]
            scalars["Perf/rank_env_steps"].append((step, wall, ENVS * k))
            scalars["Perf/rank_fps"].append((step, wall, ENVS / seconds))
            if rank == 0:
                scalars["Perf/total_env_steps"].append((step, wall, 2 * ENVS * k))
                scalars["Perf/total_fps"].append((step, wall, 2 * ENVS / seconds))
        write_events(run / "tb" / f"rank{rank}", scalars)
    return run


def test_a_two_rank_run_whose_ranks_wait_for_each_other_is_no_forgery(tmp_path):
    # rank 0 reaches the window's first point last (rank 1 waits 0.05 s), the last point first
    # (it waits 0.07 s): its own time for the window, 0.48 s, is 13% off the events' 0.55 s
    waits0 = [0.0] * 7 + [0.02, 0.0, 0.0, 0.0, 0.0, 0.0]
    waits1 = [0.0] * 7 + [-0.03, 0.0, 0.0, 0.0, 0.0, 0.07]
    run = _unsynced_run(tmp_path, waits0, waits1)
    metrics = analyze_run(run)
    assert metrics["window"]["first_step"] == 7 and metrics["window"]["last_step"] == 12
    assert logged_rate_problems("r", run, metrics) == ([], [])


def test_a_two_rank_runs_times_outside_its_ranks_range_are_named(tmp_path):
    run = _unsynced_run(tmp_path, [0.0] * 13, [0.0] * 13)
    retimed(event_file(run), lambda step, wall: wall if step < 6 else wall - 0.03 * (step - 5))
    problems, notes = logged_rate_problems("r", run, analyze_run(run))
    assert len(problems) == 1 and not notes, problems
    assert problems[0].startswith("r: the events' times give "), problems
    assert "over the window (steps 7..12), the trainer logged" in problems[0], problems


def _problems_after(tmp_path, change) -> list[str]:
    """verify's problems of the logged rates once the run's rank 0 file is changed by
    `change(path, last wall time)` and its metrics made again from it."""
    root = copy_committed_set(tmp_path, SET)
    run = root / "runs" / RUN
    last = max(s.wall_time for series in read_event_file(event_file(run)).values() for s in series)
    change(event_file(run), last)
    (root / "metrics" / f"{RUN}.json").write_text(json.dumps(analyze_run(run), indent=1))
    remake_manifest(root)
    return [p for p in verify(root).metrics if "the trainer logged" in p]


def test_the_logged_rate_at_the_windows_first_step_is_held(tmp_path):
    # the tail-mean rate averages it (events[n // 2:]): x20 moved the page's 17,057 to 36,035
    problems = _problems_after(tmp_path, lambda path, last: revalued(
        path, "Perf/total_fps", lambda step, value: value * 20 if step == 160 else value))
    assert len(problems) == 1, problems
    assert re.fullmatch(r"runs/shared_r1_n1_pool7: the events' times give [\d,.]+ env steps/s over the interval "
                        r"of steps 150\.\.160, the trainer logged [\d,.]+ \(Perf/total_fps, .*", problems[0]), problems


def test_times_before_the_window_squeezed_are_named(tmp_path):
    # the page's event span 33.3 s -> 22.3 s, the window's times untouched
    def squeeze(path, last):
        first = min(s.wall_time for series in read_event_file(path).values() for s in series if s.step == 160)
        retimed(path, lambda step, wall: wall if step >= 160 else first - (first - wall) / 3)

    problems = _problems_after(tmp_path, squeeze)
    assert len(problems) == 1, problems
    assert "over the interval of steps 10..20, the trainer logged" in problems[0], problems
