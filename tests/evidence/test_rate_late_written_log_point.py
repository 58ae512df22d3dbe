"""A log point's events written late are no forgery: a legitimate CPU set on a loaded machine
had its step-20 events written 0.25 s after the clock read that ended their interval (before
the trainer wrote them with that read's time), so the interval 15..20 read 0.25 s long in the
events and 20..24 0.25 s short, the two together exact; verify called the events' wall times
forged and counted the run out of the summary. An interval is now excused where its neighbour
across a late point makes up for it; a rate forged in one interval, or an event moved earlier,
is made up for by nothing and still named."""

import json
import re
import shutil
from pathlib import Path

import pytest

from event_times import event_file, retimed, revalued
from set_copies import copy_committed_set, remake_manifest

from sacscale.analysis.metrics import analyze_run
from sacscale.evidence.logged_rate import logged_rate_problems
from sacscale.evidence.verify import verify

REPO = Path(__file__).resolve().parents[2]
RUN = REPO / "results" / "h200x1_shared_short" / "runs" / "shared_r2_n1_pool7"  # log points every 10, about 1 s apart


@pytest.fixture
def run(tmp_path):
    copy = tmp_path / RUN.name
    shutil.copytree(RUN, copy)
    return copy


def _problems(run) -> list[str]:
    problems, notes = logged_rate_problems("r", run, analyze_run(run))
    assert not notes, notes
    return problems


def _moved(step: int, seconds: float):
    return lambda at, wall: wall + seconds if at == step else wall


@pytest.mark.parametrize("step", [40, 160, 200])  # before the window, its first point, inside it
def test_a_log_point_written_late_is_no_forgery(run, step):
    retimed(event_file(run), _moved(step, 0.25))
    assert _problems(run) == []


def test_two_log_points_written_late_apart_are_no_forgery(run):
    retimed(event_file(run), lambda at, wall: wall + {60: 0.3, 240: 0.2}.get(at, 0.0))
    assert _problems(run) == []


def test_a_log_point_moved_earlier_is_named(run):
    retimed(event_file(run), _moved(200, -0.25))
    problems = _problems(run)
    assert len(problems) == 1 and "over the interval of steps 190..200, the trainer logged" in problems[0], problems


def test_a_log_point_written_later_than_any_write_delay_is_named(run):
    retimed(event_file(run), _moved(200, 0.6))
    problems = _problems(run)
    assert len(problems) == 1 and "over the interval of steps 190..200, the trainer logged" in problems[0], problems


@pytest.mark.parametrize("factor", [1 / 1.25, 1.25])  # the interval's own time 0.25 s longer, or shorter
def test_a_rate_forged_in_one_interval_is_named(run, factor):
    revalued(event_file(run), "Perf/total_fps", lambda at, value: value * factor if at == 200 else value)
    problems = _problems(run)
    assert len(problems) == 1, problems
    assert re.fullmatch(r"r: the events' times give [\d,.]+ env steps/s over the interval of steps 190\.\.200, the "
                        r"trainer logged [\d,.]+ \(Perf/total_fps, .*", problems[0]), problems


def _set_after(tmp_path, change):
    """verify of the committed set with its run's rank 0 events changed by `change(path)` and
    the run's metrics made again from them."""
    root = copy_committed_set(tmp_path, "h200x1_shared_short")
    run = root / "runs" / RUN.name
    change(event_file(run))
    (root / "metrics" / f"{RUN.name}.json").write_text(json.dumps(analyze_run(run), indent=1))
    remake_manifest(root)
    return verify(root)


def test_a_set_whose_run_has_a_log_point_written_late_verifies(tmp_path):
    result = _set_after(tmp_path, lambda path: retimed(path, _moved(200, 0.25)))
    assert result.ok, result.problems()


def test_a_run_named_for_its_logged_rate_is_named_once(tmp_path):
    # counted out of the recomputed summary, it changed every figure of its configuration: 40
    # further lines on the summary's and the page's tables, none of them a fault of their own
    result = _set_after(tmp_path, lambda path: revalued(
        path, "Perf/total_fps", lambda at, value: value * 1.25 if at == 100 else value))
    assert len(result.problems()) == 1, result.problems()
    assert "over the interval of steps 90..100, the trainer logged" in result.problems()[0]
