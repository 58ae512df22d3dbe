"""Planning a CPU-preset set whose run configuration `n1_cpu` has a given run env, as the
run-env tests do: the plan, or the one line a refusal names."""

from pathlib import Path

import pytest
import yaml

from sacscale.pipeline.runplan import Host, PlanError, resolve

REPO = Path(__file__).resolve().parents[2]
PRESETS = yaml.safe_load((REPO / "workflow" / "presets.yaml").read_text())
CPU_BOX = Host(cuda_devices=0, cpus=frozenset(range(2)))
WHERE = "run_configs.n1_cpu.env"


def plan(config_env):
    return resolve({"preset": "cpu", "run_configs": {"n1_cpu": {"env": config_env}}}, PRESETS, CPU_BOX)


def refused(config_env) -> str:
    with pytest.raises(PlanError) as info:
        plan(config_env)
    return str(info.value)
