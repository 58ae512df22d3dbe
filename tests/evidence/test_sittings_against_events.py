"""train_meta.json `sittings` held to the run's event files (one a sitting and rank, each
from its sitting's checkpoint on, under its own log interval). A `sittings` entry added to
a run never resumed hid a log_every edited alike in every record (10 -> 5): only the steps
after the last sitting's `from_iteration` were judged."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from set_copies import copy_committed_set, remake_manifest

from sacscale.analysis.events import Scalar, read_run_files
from sacscale.evidence.log_cadence import LOGGED_EVERY_INTERVAL, sitting_problems
from sacscale.evidence.verify import verify

SET = "h200x1_shared_short"
SMALL = ["--devices", "cpu", "--num-envs", "4", "--batch-size", "32"]


def _forged_log_every_and_sitting(root, from_iteration: int) -> None:
    for path in [root / "plan.json", root / "environment.json", *root.glob("runs/*n1_pool7/*.json")]:
        text = path.read_text()
        text = re.sub(r'"log_every": 10\b', '"log_every": 5', text)
        text = re.sub(r'"--log-every",(\s*)"10"', r'"--log-every",\1"5"', text)
        path.write_text(text.replace("--log-every 10 ", "--log-every 5 "))
    for path in root.glob("runs/*n1_pool7/train_meta.json"):
        meta = json.loads(path.read_text())
        path.write_text(json.dumps({**meta, "sittings": [{"from_iteration": from_iteration}]}))


@pytest.mark.parametrize("from_iteration", [299, 300])
def test_a_sitting_added_to_a_run_never_resumed_is_named(tmp_path, from_iteration):
    root = copy_committed_set(tmp_path, SET)
    _forged_log_every_and_sitting(root, from_iteration)
    remake_manifest(root)
    records = verify(root).records
    assert ("shared_r1_n1_pool7: train_meta.json records 1 resumed sitting(s), but the run's command (run.json) "
            "has no --resume: the pipeline starts every run fresh") in records, records


@pytest.fixture(scope="module")
def resumed(tmp_path_factory):
    """A real run of 7 iterations logging every 2, resumed to 14 logging every 3."""
    run = tmp_path_factory.mktemp("sittings") / "run"
    train = [sys.executable, "-m", "sacscale", "train", *SMALL, "--log-dir", str(run)]
    subprocess.run([*train, "--iterations", "7", "--log-every", "2"], check=True, capture_output=True)
    subprocess.run([*train, "--resume", str(run), "--iterations", "14", "--log-every", "3"], check=True,
                   capture_output=True)
    return run


def _meta(run: Path) -> dict:
    return json.loads((run / "train_meta.json").read_text())


def test_a_real_resumed_run_agrees_with_its_sittings(resumed):
    meta = _meta(resumed)
    assert [s["from_iteration"] for s in meta["sittings"]] == [7]
    assert sitting_problems("r", meta, {}, read_run_files(resumed)) == []


def test_sittings_removed_from_a_resumed_run_are_named_by_its_event_files(resumed):
    meta = {key: value for key, value in _meta(resumed).items() if key != "sittings"}
    assert sitting_problems("r", meta, {}, read_run_files(resumed)) == [
        "r: tb/rank0 holds 2 event file(s), but train_meta.json records 1 sitting(s) (never resumed); each sitting "
        "writes one a rank"]


def test_a_moved_from_iteration_is_named_by_both_sittings_events(resumed):
    meta = _meta(resumed)
    meta["sittings"][0]["from_iteration"] = 10
    files = read_run_files(resumed)
    first, second = (p.name for p, _ in files[0])
    assert sitting_problems("r", meta, {}, files) == [
        f"r: tb/rank0/{first} (sitting 1 of 2, from iteration 0) events log Perf/rank_env_steps at 2, 4, 6, 7: not "
        "every multiple of one interval (the trainer logs at each multiple of log_every; step 7 off the interval)",
        f"r: tb/rank0/{second} (sitting 2 of 2, from iteration 10) events log Perf/rank_env_steps at 9, 12, 14, but "
        "a sitting from iteration 10 with log_every 3 (train_meta.json sittings[0].config) logs at 12, 14: step 9 off "
            "the interval"]


def test_a_resumed_sittings_interval_edited_is_named(resumed):
    meta = _meta(resumed)
    meta["sittings"][0]["config"]["log_every"] = meta["config"]["log_every"] = 2
    second = read_run_files(resumed)[0][1][0].name
    assert sitting_problems("r", meta, {}, read_run_files(resumed)) == [
        f"r: tb/rank0/{second} (sitting 2 of 2, from iteration 7) events log Perf/rank_env_steps at 9, 12, 14, but "
        "a sitting from iteration 7 with log_every 2 (train_meta.json sittings[0].config) logs at 8, 10, 12, 14: "
            "steps 8, 10 are missing; step 9 off the interval"]


def test_a_sittings_start_before_the_earlier_sittings_file_is_named(resumed):
    meta = _meta(resumed)
    meta["sittings"][0]["start_time"] = meta["start_time"] - 100
    problems = sitting_problems("r", meta, {}, read_run_files(resumed))
    assert len(problems) == 1 and "(sitting 1 of 2, from iteration 0) events created at " in problems[0]
    assert ", after the next sitting's start_time " in problems[0]


def _files(*steps_by_file: list[int]) -> dict:
    return {0: [(Path(f"events.out.tfevents.{i}"), {LOGGED_EVERY_INTERVAL: [Scalar(s, 1.0, 1.0) for s in steps]})
                for i, steps in enumerate(steps_by_file)]}


def test_the_first_sittings_unrecorded_interval_must_be_regular():
    meta = {"config": {"log_every": 4, "iterations": 30}, "sittings": [{"from_iteration": 20, "config": {
        "log_every": 4, "iterations": 30}}]}
    assert sitting_problems("r", meta, {}, _files([10, 20], [24, 28, 30])) == []
    assert sitting_problems("r", meta, {}, _files([10, 20, 30], [24, 28, 30])) == []  # logged past its checkpoint
    assert sitting_problems("r", meta, {}, _files([10, 20], [28, 30]))[0].endswith(
        "but a sitting from iteration 20 with log_every 4 (train_meta.json sittings[0].config) logs at 24, 28, 30: "
        "step 24 is missing")
    assert sitting_problems("r", meta, {}, _files([10], [24, 28, 30])) == [
        "r: tb/rank0/events.out.tfevents.0 (sitting 1 of 2, from iteration 0) events end at iteration 10, but the next "
        "sitting resumed from iteration 20 (logging every 10, this sitting logged 20 before that checkpoint)"]
    assert sitting_problems("r", meta, {}, _files([10, 20, 25], [24, 28, 30])) == [
        "r: tb/rank0/events.out.tfevents.0 (sitting 1 of 2, from iteration 0) events log Perf/rank_env_steps at 10, "
        "20, 25: not every multiple of one interval (the trainer logs at each multiple of log_every; step 25 off the "
        "interval)"]
