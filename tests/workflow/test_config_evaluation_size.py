"""The evaluation resolved once at planning and recorded in plan.json (`evaluation`: enabled,
envs_per_command and seconds, from the config or the default by where the runs train), its
config values refused at planning with one line naming the key, and a CPU set's evaluation
held to the full protocol's size (4096 envs planned hours of simulation after every run)."""

from pathlib import Path

import pytest
import yaml

from sacscale.pipeline.evaluation_size import evaluate_flags
from sacscale.pipeline.runplan import Host, PlanError, resolve

ROOT = Path(__file__).resolve().parents[2]
PRESETS = yaml.safe_load((ROOT / "workflow" / "presets.yaml").read_text())
CPU_BOX = Host(cuda_devices=0, cpus=frozenset(range(2)))
H200_1 = Host(cuda_devices=1, cpus=frozenset(range(16)))


def cpu_plan(evaluation=None):
    return resolve({"preset": "cpu", **({"evaluation": evaluation} if evaluation is not None else {})},
                   PRESETS, CPU_BOX)


def gpu_plan(evaluation=None):
    return resolve({"preset": "h200x1", **({"evaluation": evaluation} if evaluation is not None else {})},
                   PRESETS, H200_1)


def evaluating(envs_per_command: int, seconds: float) -> dict:
    """plan.json's evaluation of a plan that evaluates (the config's default)."""
    return {"enabled": True, "envs_per_command": envs_per_command, "seconds": seconds}


def test_the_default_size_by_device_is_in_the_plan():
    assert cpu_plan().as_dict()["evaluation"] == {"enabled": True, "envs_per_command": 1, "seconds": 2.0}
    assert gpu_plan().as_dict()["evaluation"] == {"enabled": True, "envs_per_command": 8, "seconds": 20.0}
    assert cpu_plan({"envs_per_command": None, "seconds": None}).evaluation == evaluating(1, 2.0)


def test_the_configs_size_is_in_the_plan_and_is_what_evaluate_is_given():
    plan = gpu_plan({"envs_per_command": 4096, "seconds": 10})
    assert plan.as_dict()["evaluation"] == {"enabled": True, "envs_per_command": 4096, "seconds": 10.0}
    assert evaluate_flags(plan.evaluation) == "--envs-per-command 4096 --seconds 10.0"
    # the seconds exactly as recorded: evaluate writes back what it was given
    assert evaluate_flags(cpu_plan({"seconds": 1.23456789}).evaluation) == "--envs-per-command 1 --seconds 1.23456789"


def test_whether_the_pipeline_evaluates_is_in_the_plan():
    """The set itself says whether its evaluations are among the outputs it owes: a manifest
    made by hand before them is refused (sacscale.finished_sets.missing_outputs)."""
    assert cpu_plan({"enabled": False}).as_dict()["evaluation"] == {"enabled": False, "envs_per_command": 1,
                                                                    "seconds": 2.0}
    assert gpu_plan({"enabled": True, "seconds": 10}).evaluation["enabled"] is True


def test_the_workflow_evaluates_as_the_plan_records():
    text = (ROOT / "workflow" / "rules" / "common.smk").read_text()
    body = text[text.index("def all_evals():"):text.index("def video_outputs")]
    assert 'PLAN.evaluation["enabled"]' in body and "config" not in body.split('"""')[-1]


def test_the_workflow_reads_the_evaluation_from_the_plan():
    text = (ROOT / "workflow" / "rules" / "common.smk").read_text()
    body = text[text.index("def eval_args():"):text.index("def figure_paths")]
    assert "evaluate_flags(PLAN.evaluation)" in body and "config" not in body.split('"""')[-1]


@pytest.mark.parametrize("evaluation, message", [
    ({"envs_per_command": 0}, "evaluation.envs_per_command: 0 is not a whole number in 1..4096"),
    ({"envs_per_command": 2.5}, "evaluation.envs_per_command: 2.5 is not a whole number in 1..4096"),
    ({"envs_per_command": True}, "evaluation.envs_per_command: True is not a whole number in 1..4096"),
    ({"envs_per_command": "8"}, "evaluation.envs_per_command: '8' is not a whole number in 1..4096"),
    ({"envs_per_command": 4097}, "evaluation.envs_per_command: 4097 is not a whole number in 1..4096"),
    ({"seconds": 0}, "evaluation.seconds: 0 is not a finite number of seconds above 0"),
    ({"seconds": -2}, "evaluation.seconds: -2 is not a finite number of seconds above 0"),
    ({"seconds": "20"}, "evaluation.seconds: '20' is not a finite number of seconds above 0"),
    ({"seconds": 21}, "evaluation.seconds 21: must give 1..1000 control steps (one episode, 20 s)"),
    ("big", "evaluation: 'big' is not a mapping (enabled, envs_per_command, seconds)"),
    ({"enabled": "no"}, "evaluation.enabled: 'no' is not true or false"),
    ({"enabled": 0}, "evaluation.enabled: 0 is not true or false"),
])
def test_bad_values_are_refused_at_planning_naming_the_key(evaluation, message):
    with pytest.raises(PlanError) as info:
        gpu_plan(evaluation)
    assert str(info.value) == message


def test_a_cpu_set_is_refused_an_evaluation_of_hours():
    with pytest.raises(PlanError) as info:
        cpu_plan({"envs_per_command": 4096})
    assert str(info.value) == (
        "evaluation.envs_per_command 4096 x evaluation.seconds 2: 8192 env-seconds a command on a CPU set (no run "
        "trains on a GPU); at most 160 (the full protocol's 8 envs x 20 s, about half a minute a run on one core): "
        "every env is simulated on this machine's CPUs after every run")


def test_a_cpu_set_may_run_the_full_protocol():
    assert cpu_plan({"envs_per_command": 8, "seconds": 20}).evaluation == evaluating(8, 20.0)
    assert cpu_plan({"envs_per_command": 16, "seconds": 10}).evaluation == evaluating(16, 10.0)
