"""The steady rate held to the rate the trainer logged itself: the events' wall times squeezed
inside the measured window (in order, every one still in the run's window) raised the run's
steady rate by 25%, and with its metrics made again from the events verify passed."""

import json

from event_times import event_file, retimed
from set_copies import copy_committed_set, remake_manifest

from sacscale.analysis.events import read_event_file
from sacscale.analysis.metrics import analyze_run
from sacscale.evidence.logged_rate import trainer_rate
from sacscale.evidence.verify import verify

SET = "h200x1_shared_short"
RUN = "shared_r1_n1_pool7"


def _metrics_after(tmp_path, retime) -> list[str]:
    """verify's metrics problems once the run's events are retimed by `retime(step, wall_time,
    the file's last wall time)` and its metrics made again from them."""
    root = copy_committed_set(tmp_path, SET)
    run = root / "runs" / RUN
    last = max(s.wall_time for series in read_event_file(event_file(run)).values() for s in series)
    retimed(event_file(run), lambda step, wall_time: retime(step, wall_time, last))
    (root / "metrics" / f"{RUN}.json").write_text(json.dumps(analyze_run(run), indent=1))
    remake_manifest(root)
    return verify(root).metrics


def test_wall_times_squeezed_inside_the_window_are_named(tmp_path):
    def squeeze(step, wall_time, last):  # from the window's first step (160) on; the last time kept
        return wall_time if step < 160 else last - (last - wall_time) * 0.8

    problems = _metrics_after(tmp_path, squeeze)
    assert [p for p in problems if "the trainer logged" in p] == [
        "runs/shared_r1_n1_pool7: the events' times give 21,359.7 env steps/s over the window (steps 160..300), "
        "the trainer logged 17,087.8 (Perf/total_fps, its intervals' own times summed over the window): more "
        "than 6% apart, the events' wall times are not the ones the trainer wrote"], problems


def test_every_committed_run_agrees_with_its_logged_rate(tmp_path):
    problems = verify(copy_committed_set(tmp_path, SET)).metrics
    assert not [p for p in problems if "the trainer logged" in p], problems


def test_a_window_interval_without_a_logged_rate_gives_no_rate():
    from sacscale.analysis.events import Scalar

    steps = [Scalar(10 * k, 100.0 + k, 1000.0 * k) for k in range(5)]
    window = {"first_step": 20, "last_step": 40, "env_steps": 2000.0}
    fps = [Scalar(10 * k, 100.0 + k, 1000.0) for k in range(5)]
    assert trainer_rate(steps, fps, window) == 1000.0
    assert trainer_rate(steps, fps[:-1], window) is None
