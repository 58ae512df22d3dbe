"""Config values (docs/faults.md row 28) that passed
planning and broke a run later: a log interval that leaves the analysis too few points
(the run trained to its end, then gave no figure), run env variables the launcher owns
(RANK/WORLD_SIZE: the trainer waited for ranks that never came, then timed out), PYTHON*
values the run's interpreter dies on at start, a PATH without the trainer's command
(`cannot start 'sacscale'` at the run), and configuration or set names that differ only in
case (one run folder on a case-insensitive disk)."""

import os
import shutil
from pathlib import Path

import pytest
import yaml

from sacscale.pipeline.runplan import Host, PlanError, check_config, resolve

PRESETS = yaml.safe_load((Path(__file__).resolve().parents[2] / "workflow" / "presets.yaml").read_text())
CPU_BOX = Host(cuda_devices=0, cpus=frozenset(range(2)))


def entry(**extra):
    return {"devices": "cpu", "cpu_pools": "auto", "description": "d", **extra}


def plan(**config):
    return resolve({"preset": "cpu", **config}, PRESETS, CPU_BOX)


@pytest.mark.parametrize("log_every, iterations", [(1000, 24), (12, 24), (24, 24)])
def test_too_few_log_points_for_the_analysis_are_refused(log_every, iterations):
    with pytest.raises(PlanError, match=r"run_configs\.n1_cpu\.log_every: .* log point\(s\); the analysis needs "
                                        "at least 3"):
        plan(iterations=iterations, run_defaults={"log_every": log_every})


@pytest.mark.parametrize("log_every, iterations", [(8, 24), (10, 24), (2, 24)])
def test_enough_log_points_pass(log_every, iterations):
    plan(iterations=iterations, run_defaults={"log_every": log_every})


@pytest.mark.parametrize("name", ["RANK", "WORLD_SIZE", "MASTER_PORT", "LOCAL_RANK", "CUDA_VISIBLE_DEVICES"])
def test_a_variable_the_launcher_sets_is_refused(name):
    with pytest.raises(PlanError, match=rf"run_defaults\.env: {name} is set by the trainer's launcher"):
        plan(run_defaults={"env": {name: "1"}})


@pytest.mark.parametrize("env, says", [
    ({"PYTHONHASHSEED": "x"}, "PYTHONHASHSEED must be"),
    ({"PYTHONMALLOC": "nope"}, "PYTHONMALLOC"),
    ({"PYTHONHOME": "/nonexistent"}, "Python does not start with PYTHONHOME"),
])
def test_a_python_variable_the_interpreter_dies_on_is_refused(env, says):
    with pytest.raises(PlanError, match=r"run_defaults\.env: Python does not start with") as caught:
        plan(run_defaults={"env": env})
    assert says in str(caught.value)


def test_usable_python_variables_pass():
    plan(run_defaults={"env": {"PYTHONHASHSEED": "0", "PYTHONUNBUFFERED": "1"}})


def test_configuration_names_that_differ_only_in_case_are_refused():
    with pytest.raises(PlanError, match="order: 'N1' and 'n1' differ only in case"):
        plan(run_configs={"n1": entry(), "N1": entry()}, order=["n1", "N1"])


@pytest.mark.parametrize("folder", ["results", "reports"])
def test_a_run_set_named_as_an_existing_one_in_other_case_is_refused(folder, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / folder / "h200x1").mkdir(parents=True)
    with pytest.raises(PlanError, match=rf"run_set: 'H200x1' and {folder}/h200x1 differ only in case"):
        plan(run_set="H200x1")
    plan(run_set="h200x1_b")


@pytest.mark.parametrize("path", ["", "/nonexistent"])
def test_a_path_without_the_trainers_command_is_refused(path):
    with pytest.raises(PlanError, match=r"run_defaults\.env: PATH .* does not hold 'sacscale'"):
        plan(run_defaults={"env": {"PATH": path}})


def test_a_path_with_the_trainers_command_passes():
    folder = os.path.dirname(shutil.which("sacscale"))
    plan(run_defaults={"env": {"PATH": f"{folder}:/usr/bin"}})


@pytest.mark.parametrize("name, value", [("OMP_NUM_THREADS", "abc"), ("OMP_NUM_THREADS", "0"),
                                         ("MKL_NUM_THREADS", "-1"), ("OPENBLAS_NUM_THREADS", "1e3"),
                                         ("OMP_NUM_THREADS", "\uff14")])
def test_a_thread_count_that_is_not_a_count_is_refused(name, value):
    with pytest.raises(PlanError, match=rf"run_defaults\.env: {name} must be a whole number of threads"):
        plan(run_defaults={"env": {name: value}})


def test_a_thread_count_passes():
    plan(run_defaults={"env": {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": 4}})


@pytest.mark.parametrize("text, base", [("seed: 010\n", 8), ("repeats: -07\n", 8), ("iterations: 1:30\n", 60),
                                        ("run_defaults:\n  timeout_s: 1:30.5\n", 60)])
def test_numbers_yaml_reads_in_another_base_are_refused(tmp_path, text, base):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(PlanError, match=rf"config file {path}: line \d+: .* is read by YAML as a base-{base} number"):
        check_config([path], {})


@pytest.mark.parametrize("text", ["seed: 0\n", "seed: 10\n", "repeats: 0x10\n", "timeout_s: 0.5\n",
                                  "run_set: '010'\n", "cpu_pools: '1:3'\n", "seed: 1_000\n"])
def test_numbers_in_decimal_and_quoted_text_pass(tmp_path, text):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    check_config([path], {})
