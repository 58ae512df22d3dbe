"""The waits a run's options ask for are bounded (30 days, sacscale.checks.MAX_WAIT_S).
Before: `overrides: {timeout_s: 1e30}` planned, and `sacscale train --timeout-s 1e30`
started its ranks, each of which died in an OverflowError traceback when torch's process
group made a timedelta of it; `train-reference --timeout-s nan` waited for ever."""

import sys
from pathlib import Path

import pytest
import yaml

from sacscale.checks import MAX_WAIT_S
from sacscale.cli import main
from sacscale.pipeline.runplan import Host, PlanError, resolve
from sacscale.train import TrainConfig, TrainingError

REPO = Path(__file__).resolve().parents[1]
PRESETS = yaml.safe_load((REPO / "workflow" / "presets.yaml").read_text())
CPU_BOX = Host(cuda_devices=0, cpus=frozenset(range(2)))
BOUND = "must be a number of seconds in (0, 2592000] (30 days)"


def test_the_bound_is_thirty_days():
    assert MAX_WAIT_S == 30 * 86400


@pytest.mark.parametrize("value, shown", [(1e30, "1e+30"), (MAX_WAIT_S + 1, f"{MAX_WAIT_S + 1}.0")])
def test_a_trainer_wait_past_the_bound_is_refused_at_planning(value, shown):
    with pytest.raises(PlanError) as info:
        resolve({"preset": "cpu", "run_configs": {"n1_cpu": {"overrides": {"timeout_s": value}}}}, PRESETS, CPU_BOX)
    assert str(info.value) == f"run_configs.n1_cpu.overrides.timeout_s: --timeout-s {BOUND}, got {shown}"


def test_a_trainer_wait_at_the_bound_plans():
    plan = resolve({"preset": "cpu", "run_configs": {"n1_cpu": {"overrides": {"timeout_s": MAX_WAIT_S}}}},
                   PRESETS, CPU_BOX)
    assert plan.run_configs["n1_cpu"].overrides["timeout_s"] == MAX_WAIT_S


def test_the_trainers_own_check_refuses_a_wait_past_the_bound():
    with pytest.raises(TrainingError) as info:
        TrainConfig(timeout_s=1e30).validate()
    assert str(info.value) == f"--timeout-s {BOUND}, got 1e+30"


def test_train_refuses_a_wait_past_the_bound_before_any_rank_starts(tmp_path, capsys):
    pytest.importorskip("torch")  # the command's module imports it
    code = main(["train", "--devices", "cpu,cpu", "--num-envs", "4", "--iterations", "4", "--batch-size", "32",
                 "--replay-per-env", "16", "--log-dir", str(tmp_path / "run"), "--timeout-s", "1e30"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.strip() == f"sacscale train: error: --timeout-s {BOUND}, got 1e+30"
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("value, shown", [("1e30", "1e+30"), ("nan", "nan"), ("-1", "-1.0")])
def test_train_reference_refuses_a_wait_out_of_bounds_before_starting(tmp_path, capsys, value, shown):
    code = main(["train-reference", "--log-dir", str(tmp_path / "run"), "--reference-python", sys.executable,
                 "--timeout-s", value])
    assert code == 2
    assert capsys.readouterr().err.strip() == f"sacscale train-reference: error: --timeout-s {BOUND}, got {shown}"
    assert not (tmp_path / "run").exists()
