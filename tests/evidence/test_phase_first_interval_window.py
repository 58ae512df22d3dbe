"""A sitting's first interval held to its recorded window: no earlier event bounds its logged
rate (each later interval is held to its events' times), yet the phase bounds' elapsed time
rests on it. A run's first `Perf/rank_fps` and `Perf/total_fps` x0.01 stretched the sitting's
time 63.5 s -> 625 s by its logged rates, and every collector env step x1.9, named without that
edit, then passed verify. The interval's clock starts after the sitting's start_time
(train_meta.json), so its logged time is at most the time from there to its events; but that
start may move earlier with run.json's within the start's graces (60 s, 300 s), and a start
moved 40 s earlier gave the same forgery room again. The clock also starts after the trainer
opens its event writer (the file's first record), which no start's grace moves: that bounds
it to within a few ms of the interval's real time."""

import json
import re
import shutil
import subprocess
import sys

import pytest

from event_times import event_file, revalued
from set_copies import REPO

from sacscale.analysis.events import read_run_files
from sacscale.analysis.reference import is_reference_run
from sacscale.evidence.phase_bounds import phase_time_problems

RUN = REPO / "results" / "h200x1_shared" / "runs" / "shared_r2_n1_pool7"


def _problems(run) -> list[str]:
    meta = json.loads((run / "train_meta.json").read_text())
    return phase_time_problems(run.name, meta, read_run_files(run))


@pytest.fixture
def run(tmp_path):
    copy = tmp_path / RUN.name
    shutil.copytree(RUN, copy)
    return copy


def test_a_first_rate_lowered_to_stretch_the_sitting_is_named(run):
    for tag in ("Perf/rank_fps", "Perf/total_fps"):
        revalued(event_file(run), tag, lambda step, value: value * 0.01 if step == 10 else value)
    revalued(event_file(run), "Time/collector_env_step_ms", lambda step, value: value * 1.9)
    problems = _problems(run)
    assert len(problems) == 1, problems
    assert re.fullmatch(
        r"shared_r2_n1_pool7: tb/rank0 logs Perf/rank_fps [\d,.]+ at step 10, the sitting's first log point: "
        r"20,480 env steps in [\d,.]+ s, but its events there were written [\d.]+ s after its event file was "
        r"created \(its first record\), before which the interval's clock had not started: the logged rate is not "
        r"the one the trainer measured", problems[0]), problems


def test_a_first_rate_lowered_to_fit_a_start_moved_earlier_is_named(run):
    # train_meta.json's start 40 s earlier (run.json's with it, inside the start's graces), the
    # first interval's rates lowered to fill 95% of the time from there to its events
    meta_path = run / "train_meta.json"
    meta = json.loads(meta_path.read_text())
    meta["start_time"] -= 40
    meta_path.write_text(json.dumps(meta))
    series = read_run_files(run)[0][0][1]
    (first,) = [s for s in series["Perf/rank_env_steps"] if s.step == 10]
    (rate,) = [s.value for s in series["Perf/rank_fps"] if s.step == 10]
    lower = first.value / rate / (0.95 * (first.wall_time - meta["start_time"]))
    assert lower < 0.2  # the interval stretched more than five times
    for tag in ("Perf/rank_fps", "Perf/total_fps"):
        revalued(event_file(run), tag, lambda step, value: value * lower if step == 10 else value)
    revalued(event_file(run), "Time/collector_env_step_ms", lambda step, value: value * 1.9)
    problems = _problems(run)
    assert len(problems) == 1, problems
    assert "at step 10, the sitting's first log point: 20,480 env steps in " in problems[0], problems
    assert "s after its event file was created (its first record), before which the interval's clock" in problems[0]


def test_the_total_rate_alone_lowered_is_named(run):
    revalued(event_file(run), "Perf/total_fps", lambda step, value: value * 0.1 if step == 10 else value)
    problems = _problems(run)
    assert len(problems) == 1 and "logs Perf/total_fps " in problems[0], problems


def test_every_committed_runs_first_interval_fits_its_window():
    # measured: the first interval's logged time leaves at least 0.8 ms of the time from its
    # event file's creation to its events (at most 0.89 of the time from its sitting's start)
    runs = sorted(p for p in (REPO / "results").glob("*/runs/*") if (p / "train_meta.json").is_file()
                  and not is_reference_run(p))
    assert len(runs) > 80
    for run in runs:
        assert not [p for p in _problems(run) if "the sitting's first log point" in p], run


def test_a_resumed_runs_sittings_are_held_to_their_own_windows(tmp_path):
    # the second sitting's first interval runs from its checkpoint's iteration, its clock from its own start
    run = tmp_path / "run"
    train = [sys.executable, "-m", "sacscale", "train", "--devices", "cpu", "--num-envs", "4", "--batch-size", "32",
             "--log-dir", str(run)]
    subprocess.run([*train, "--iterations", "7", "--log-every", "2"], check=True, capture_output=True)
    subprocess.run([*train, "--resume", str(run), "--iterations", "14", "--log-every", "3"], check=True,
                   capture_output=True)
    assert _problems(run) == []
    second = sorted((run / "tb" / "rank0").glob("events.out.tfevents.*"))[-1]
    revalued(second, "Perf/rank_fps", lambda step, value: value / 1000 if step == 9 else value)
    problems = _problems(run)
    assert len(problems) == 1 and problems[0].startswith(
        "run: tb/rank0 (sitting 2 of 2) logs Perf/rank_fps "), problems
    assert "at step 9, the sitting's first log point: 8 env steps in " in problems[0], problems
