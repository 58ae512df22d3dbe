"""A log point's events written late are named: the trainer writes a log point's scalars with the
wall time of the clock read that ends its interval (tests/train/test_log_point_wall_time.py), so
its events and logged rates agree by construction and no late write needs an excuse. An excuse
of one interval made up for by its neighbour across a log point (0.5 s) let a forger move time
between adjacent intervals: the logged rates forged in compensating pairs raised the page's
tail-mean rate 20%, and a log point a time-to-quality figure reads moved 0.45 s later, and
verify passed both. A set made by the trainer before that fix on a loaded machine is named at
its late point (docs/evidence.md: remake it)."""

import json
import re
import shutil
from pathlib import Path

import pytest

from event_times import event_file, retimed, revalued
from set_copies import copy_committed_set, remake_manifest

from sacscale.analysis.metrics import TOTAL_FPS, TOTAL_STEPS, analyze_run, run_events
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


def _interval_named(problems: list[str], first: int, last: int) -> bool:
    return len(problems) == 1 and f"over the interval of steps {first}..{last}, the trainer logged" in problems[0]


# before the window, its first point, inside it; 0.25 s as seen in an older trainer's CPU set,
# 0.45 s as a forger moved a log point a time-to-quality figure reads
@pytest.mark.parametrize("step", [40, 160, 200])
@pytest.mark.parametrize("seconds", [0.25, 0.45])
def test_a_log_point_written_late_is_named(run, step, seconds):
    retimed(event_file(run), _moved(step, seconds))
    problems = _problems(run)
    # the window (steps 160..300) is held first: a late first point shortens it
    window = step == 160 and len(problems) == 1 and "over the window (steps 160..300)" in problems[0]
    assert window or _interval_named(problems, step - 10, step), problems


def _own_seconds_moved(run, moved):
    """Rank 0's `Perf/total_fps` rewritten so that the interval ending at each log point `step` is
    timed `moved(step)` seconds longer by the trainer's own clock (the events' wall times kept)."""
    _, per_rank = run_events(run)
    steps = sorted(per_rank[0][TOTAL_STEPS], key=lambda s: s.step)
    env_steps = {at.step: at.value - before.value for before, at in zip(steps, steps[1:])}
    revalued(event_file(run), TOTAL_FPS, lambda at, rate: rate if at not in env_steps or not moved(at) else
             env_steps[at] / (env_steps[at] / rate + moved(at)))


def test_rates_forged_in_compensating_pairs_are_named(run):
    # each pair's first interval 0.4 s shorter by its logged rate, the next 0.4 s longer: each
    # pair's sum exact, the events' wall times regular, the tail-mean of the rates raised ~20%
    _own_seconds_moved(run, lambda at: -0.4 if at % 20 == 0 else 0.4)
    assert _interval_named(_problems(run), 10, 20), _problems(run)


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


def test_a_set_whose_run_has_a_log_point_written_late_is_named(tmp_path):
    result = _set_after(tmp_path, lambda path: retimed(path, _moved(200, 0.25)))
    assert _interval_named(result.problems(), 190, 200), result.problems()


def test_a_set_whose_rates_are_forged_in_compensating_pairs_is_named(tmp_path):
    result = _set_after(tmp_path, lambda path: _own_seconds_moved(path.parents[2], lambda at: -0.4 if at % 20 == 0
                                                                   else 0.4))
    # the page's tail-mean rate from the forged rates is named beside it
    assert "over the interval of steps 10..20, the trainer logged" in result.problems()[0], result.problems()


def test_a_run_named_for_its_logged_rate_is_named_once(tmp_path):
    # counted out of the recomputed summary, it changed every figure of its configuration: 40
    # further lines on the summary's and the page's tables, none of them a fault of their own
    result = _set_after(tmp_path, lambda path: revalued(
        path, "Perf/total_fps", lambda at, value: value * 1.25 if at == 100 else value))
    assert len(result.problems()) == 1, result.problems()
    assert "over the interval of steps 90..100, the trainer logged" in result.problems()[0]
