"""`verify-env --plan` with a hand-edited plan its replay memory check cannot read (num_envs as
text, a float or true; a replay-per-env override that is no whole number; both spellings of
it) skipped the check silently and passed (rc 0). Now each is a named problem (rc 1), as
verify-env's other plan problems; a text override the trainer reads as a number is judged."""

import json
import os
import subprocess
import sys

import pytest
from test_verify_env import PRESETS

from sacscale.pipeline.runplan import Host, resolve

UNREAD = "is not a whole number, as planning writes it: the replay memory check cannot read it"


def verify_edited_plan(tmp_path, edit):
    plan = resolve({"preset": "cpu"}, PRESETS, Host(cuda_devices=0, cpus=frozenset(os.sched_getaffinity(0))),
                   check_host=False).as_dict()
    edit(plan["run_configs"]["n1_cpu"])
    (tmp_path / "plan.json").write_text(json.dumps(plan))
    out = tmp_path / "environment.json"
    proc = subprocess.run([sys.executable, "-m", "sacscale.cli", "verify-env", "--output", str(out),
                           "--plan", str(tmp_path / "plan.json")], capture_output=True, text=True, timeout=300)
    return proc, json.loads(out.read_text())["problems"]


@pytest.mark.parametrize("value", ["1048576", 1e12, True])
def test_num_envs_of_another_type_is_named(tmp_path, value):
    proc, problems = verify_edited_plan(tmp_path, lambda rc: rc.update(num_envs=value))
    assert proc.returncode == 1 and problems == [f"run_configs.n1_cpu.num_envs: {value!r} {UNREAD}"], proc.stderr


@pytest.mark.parametrize("value", ["1e12", 1e12, True])
def test_a_replay_override_that_is_no_whole_number_is_named(tmp_path, value):
    proc, problems = verify_edited_plan(tmp_path, lambda rc: rc["overrides"].update({"replay-per-env": value}))
    assert proc.returncode == 1, proc.stderr
    assert problems == [f"run_configs.n1_cpu.overrides.replay-per-env: {value!r} {UNREAD}"]


@pytest.mark.parametrize("value", [[["replay-per-env", 10**12]], "--replay-per-env 1000000000000"])
def test_overrides_that_are_no_object_are_named(tmp_path, value):
    proc, problems = verify_edited_plan(tmp_path, lambda rc: rc.update(overrides=value))
    assert proc.returncode == 1 and problems == [
        f"run_configs.n1_cpu.overrides: {value!r} is not an object (option -> value), as planning writes it: "
        "the replay memory check cannot read it"], proc.stderr


@pytest.mark.parametrize("value", [0, -16])
def test_num_envs_not_positive_is_named(tmp_path, value):
    proc, problems = verify_edited_plan(tmp_path, lambda rc: rc.update(num_envs=value))
    assert proc.returncode == 1 and problems == [
        f"run_configs.n1_cpu.num_envs: {value} is not a positive number of envs: the replay memory check cannot "
        "judge it"], proc.stderr


def test_both_spellings_of_the_replay_override_are_named(tmp_path):
    proc, problems = verify_edited_plan(tmp_path, lambda rc: rc["overrides"].update(
        {"replay-per-env": 100_000_000_000, "replay_per_env": 64}))
    assert proc.returncode == 1 and problems == [
        "run_configs.n1_cpu.overrides: replay-per-env and replay_per_env both set the trainer's --replay-per-env "
        "(planning gives it once): the replay memory check cannot tell which one the run takes"], proc.stderr


def test_a_text_override_planning_accepts_is_judged_as_the_trainer_reads_it(tmp_path):
    proc, problems = verify_edited_plan(tmp_path, lambda rc: rc["overrides"].update({"replay-per-env": "100000000000"}))
    assert proc.returncode == 1 and len(problems) == 1, proc.stderr
    assert problems[0].startswith("run_configs.n1_cpu.num_envs: 16 envs x 100000000000 replay rows per env")


def test_the_plan_as_planning_writes_it_passes(tmp_path):
    proc, problems = verify_edited_plan(tmp_path, lambda rc: None)
    assert proc.returncode == 0 and problems == [], proc.stderr


