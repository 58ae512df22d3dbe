"""Every evaluation's size (protocol.envs_per_command and seconds) against plan.json's
`evaluation`, which planning resolves and records; a plan stored before it recorded one is
held to the default of its time by its device. Evaluations that agree with each other but
not with the plan (every one doubled) were passed."""

import json

from set_copies import copy_committed_set, edit_record, remake_manifest

from sacscale.evidence.runset import plan_differences
from sacscale.evidence.verify import verify


def _planned(root, **evaluation) -> None:
    """plan.json's evaluation (and environment.json's copy of the plan) changed to `evaluation`:
    the set's evaluations, all alike and all consistent, now ran another size than planned."""
    edit_record(root, "plan.json", lambda plan: plan["evaluation"].update(evaluation))
    edit_record(root, "environment.json", lambda env: env["plan"]["evaluation"].update(evaluation))
    remake_manifest(root)


def _evaluations(root) -> list[str]:
    return sorted(p.name for p in (root / "eval").glob("*.json"))


def test_the_current_copy_records_the_plan_it_was_evaluated_with(work):
    assert json.loads((work / "plan.json").read_text())["evaluation"] == {"enabled": True, "envs_per_command": 8,
                                                                   "seconds": 20.0}
    assert verify(work).records == []


def test_every_evaluation_with_twice_the_planned_envs_is_named(work):
    _planned(work, envs_per_command=4)
    assert verify(work).records == [
        f"eval/{name}: protocol.envs_per_command 8, but plan.json evaluation.envs_per_command is 4"
        for name in _evaluations(work)]


def test_every_evaluation_longer_than_planned_is_named(work):
    _planned(work, seconds=10.0)
    assert verify(work).records == [
        f"eval/{name}: protocol.seconds 20.0, but plan.json evaluation.seconds is 10.0" for name in _evaluations(work)]


def _cpu_plan(record: dict) -> None:
    for rc in record["run_configs"].values():
        rc["device_kind"] = "cpu"


def test_an_older_plan_is_held_to_the_default_of_its_device(tmp_path):
    """A set stored before plan.json recorded the size, its plan saying CPU: its evaluations
    (8 envs x 20 s, the GPU default) are not the CPU default of that time (1 env x 2 s)."""
    root = copy_committed_set(tmp_path, "h200x1_shared_short")
    edit_record(root, "plan.json", _cpu_plan)
    edit_record(root, "environment.json", lambda env: _cpu_plan(env["plan"]))
    remake_manifest(root)
    records = verify(root).records
    for name in _evaluations(root):
        assert (f"eval/{name}: protocol.envs_per_command 8, but plan.json records no evaluation, and the evaluate "
                "rule then passed 1 for its device") in records, records
        assert (f"eval/{name}: protocol.seconds 20.0, but plan.json records no evaluation, and the evaluate "
                "rule then passed 2.0 for its device") in records, records


def _without_devices(plan: dict) -> None:
    for rc in plan["run_configs"].values():
        rc.pop("device_kind")


def test_an_older_plan_without_devices_is_noted_not_compared(tmp_path):
    root = copy_committed_set(tmp_path, "h200x1_shared_short")
    edit_record(root, "plan.json", _without_devices)
    edit_record(root, "environment.json", lambda env: _without_devices(env["plan"]))
    remake_manifest(root)
    result = verify(root)
    assert not any("plan.json records no evaluation" in p for p in result.records), result.records
    assert ("plan.json: no evaluation and no run configuration's device_kind, so the evaluations' seconds and "
            "envs_per_command are compared only with each other") in result.notes


def test_a_stored_plan_without_the_size_is_the_same_plan_as_its_default(tmp_path):
    stored = json.loads((copy_committed_set(tmp_path, "h200x1_shared_short") / "plan.json").read_text())
    current = {**stored, "evaluation": {"envs_per_command": 8, "seconds": 20.0}}
    assert plan_differences(stored, current) == []
    assert plan_differences(stored, {**current, "evaluation": {"envs_per_command": 16, "seconds": 20.0}}) \
        == ["evaluation"]


def test_a_stored_plan_that_does_not_say_whether_it_evaluates_is_compared_on_the_size(tmp_path):
    """Plans now record evaluation.enabled; a committed set's plan, made before, is still this
    plan (read-only, verify, resume), and a size changed since is still a different one."""
    stored = json.loads((copy_committed_set(tmp_path, "h200x1_shared_short") / "plan.json").read_text())
    current = {**stored, "evaluation": {"enabled": True, "envs_per_command": 8, "seconds": 20.0}}
    assert plan_differences(stored, current) == []
    assert plan_differences({**stored, "evaluation": {"envs_per_command": 8, "seconds": 20.0}}, current) == []
    assert plan_differences(stored, {**current, "evaluation": {"enabled": True, "envs_per_command": 16,
                                                               "seconds": 20.0}}) == ["evaluation"]
    # a plan that says is held to what it says
    assert plan_differences({**stored, "evaluation": {**current["evaluation"], "enabled": False}}, current) \
        == ["evaluation"]
