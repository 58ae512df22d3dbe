"""A run's log interval derived from its hashed events: the trainer writes its scalars at
every multiple of log_every and at the last iteration. `log_every` edited 10 -> 5 alike in
plan.json, environment.json's plan, each run.json (command, line, resolved_config) and
train_meta.json passed, though the events still log every 10 iterations."""

import re
from pathlib import Path

from set_copies import copy_committed_set, remake_manifest

from sacscale.analysis.events import Scalar
from sacscale.evidence.log_cadence import LOGGED_EVERY_INTERVAL, sitting_problems
from sacscale.evidence.verify import verify

SET = "h200x1_shared_short"


def _forged_log_every(root, new: int) -> None:
    for path in [root / "plan.json", root / "environment.json", *root.glob("runs/*/*.json")]:
        text = path.read_text()
        text = re.sub(r'"log_every": 10\b', f'"log_every": {new}', text)
        text = re.sub(r'"--log-every",(\s*)"10"', rf'"--log-every",\1"{new}"', text)
        path.write_text(text.replace("--log-every 10 ", f"--log-every {new} "))


def test_a_log_every_edited_everywhere_is_named_by_the_events(tmp_path):
    root = copy_committed_set(tmp_path, SET)
    _forged_log_every(root, 5)
    remake_manifest(root)
    records = verify(root).records
    assert ("shared_r1_n1_pool7: tb/rank0 events log Perf/rank_env_steps every 10 iterations (at 10, 20, 30, 40, "
            "...), but the run's log_every is 5 (train_meta.json config, the command's --log-every and the plan's): "
            "steps 5, 15, 25, 35, ... are missing: another run's events, or log_every edited") in records, records


def _events(*steps_by_file: list[int]) -> dict:
    return {0: [(Path(f"events.out.tfevents.{i}"), {LOGGED_EVERY_INTERVAL: [Scalar(s, 1.0, 1.0) for s in steps]})
                for i, steps in enumerate(steps_by_file)]}


def cadence_problems(name: str, meta: dict, events: dict) -> list[str]:
    return sitting_problems(name, meta, {}, events)


def test_the_last_iteration_and_a_run_stopped_early_follow_the_interval():
    meta = {"config": {"log_every": 10, "iterations": 35}}
    assert cadence_problems("r", meta, _events([10, 20, 30, 35])) == []
    assert cadence_problems("r", meta, _events([10, 20])) == []  # stopped (or timed out) at iteration 2x
    assert cadence_problems("r", meta, _events([10, 30, 35])) == [
        "r: tb/rank0 events log Perf/rank_env_steps every 20 iterations (at 10, 30, 35), but the run's log_every is "
        "10 (train_meta.json config, the command's --log-every and the plan's): step 20 is missing: logged step(s) "
        "deleted"]


def test_a_resumed_run_is_judged_from_its_last_sitting_under_its_interval():
    """A resume may change log_every: the first sitting logged every 10, the second every 4."""
    meta = {"config": {"log_every": 4, "iterations": 30},
            "sittings": [{"from_iteration": 20, "config": {"log_every": 4, "iterations": 30}}]}
    assert cadence_problems("r", meta, _events([10, 20], [24, 28, 30])) == []
    assert cadence_problems("r", meta, _events([10, 20], [30]))[0].endswith(
        "events log Perf/rank_env_steps at 30, but a sitting from iteration 20 with log_every 4 (train_meta.json "
        "sittings[0].config) logs at 24, 28, 30: steps 24, 28 are missing")
