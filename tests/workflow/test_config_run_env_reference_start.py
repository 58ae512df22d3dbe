"""A relative path in a reference run's env is judged from the folder the reference trainer
starts in. Before: every run's relative paths were judged from the checkout (where our
trainer starts), though train-reference starts unilab's interpreter in the run's work folder
(results/SET/runs/.RUN.partial, for Hydra's job log), so `env: {CXX: ../open/g++}` of a
`trainer: unilab` configuration planned while naming results/SET/runs/open/g++ for that
interpreter. Now a unilab run's relative paths are judged from the checkout (where
train-reference itself starts) and from each of its runs' work folders."""

import pytest

from sacscale.pipeline.code_paths_env import READS_WHAT_IT_NAMES
from sacscale.pipeline.runplan import Host, PlanError, resolve
from tests.workflow.test_config_run_env_any_path import PRESETS, TAIL

H200 = Host(cuda_devices=1, cpus=frozenset(range(16)))


def plan(trainer: str, env: dict):
    config = {"preset": "h200x1", "run_set": "s1", "prefix": "t", "repeats": 2, "order": ["c"],
              "run_configs": {"c": {"trainer": trainer, "devices": "0", "cpu_pools": ["1-15"], "trace": False,
                                    "env": env}}}
    return resolve(config, PRESETS, H200)


@pytest.fixture
def checkout(tmp_path, monkeypatch):
    """A checkout whose run set's runs folder holds a folder every user may write."""
    work = tmp_path / "work"
    (work / "results" / "s1" / "runs" / "open").mkdir(parents=True)
    (work / "results" / "s1" / "runs" / "open").chmod(0o777)
    monkeypatch.chdir(work)
    return work


def test_a_reference_runs_relative_path_is_judged_from_its_work_folder(checkout):
    runs = checkout / "results" / "s1" / "runs"
    with pytest.raises(PlanError) as info:
        plan("unilab", {"ANY_VARIABLE": "../open/x"})
    assert str(info.value) == (
        f"run_configs.c.env: ANY_VARIABLE: '{runs}/.t_r1_c.partial/../open/x' is inside {runs / 'open'}, which is "
        f"writable by other users without the sticky bit (mode 0777); {READS_WHAT_IT_NAMES}, {TAIL}")


def test_our_trainers_relative_path_is_judged_from_the_checkout(checkout):
    plan("sacscale", {"ANY_VARIABLE": "../open/x"})  # the checkout's ../open: not there, in a folder of ours


def test_a_reference_runs_relative_path_is_judged_from_the_checkout_too(checkout):
    (checkout / "open").mkdir()
    (checkout / "open").chmod(0o777)
    with pytest.raises(PlanError) as info:
        plan("unilab", {"PYTHONPATH": "open/x"})  # train-reference itself starts in the checkout
    assert str(info.value) == (
        f"run_configs.c.env: PYTHONPATH: '{checkout}/open/x' is inside {checkout / 'open'}, which is writable by "
        f"other users without the sticky bit (mode 0777); Python imports modules from it, {TAIL}")
