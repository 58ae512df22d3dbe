"""A run environment that loads code that is not the trainer's into the run. Before:
`env: {LD_PRELOAD: /tmp/x.so}` (or LD_AUDIT) passed planning, and the dynamic loader put
that library into every process of the run while its record named a path alone. Now it is
refused at planning, naming the key; LD_LIBRARY_PATH (where CUDA's libraries are found)
still plans."""

from pathlib import Path

import pytest
import yaml

from sacscale.pipeline.runplan import Host, PlanError, resolve

PRESETS = yaml.safe_load((Path(__file__).resolve().parents[2] / "workflow" / "presets.yaml").read_text())
CPU_BOX = Host(cuda_devices=0, cpus=frozenset(range(2)))


@pytest.mark.parametrize("name", ["LD_PRELOAD", "LD_AUDIT"])
def test_a_library_loaded_into_every_process_is_refused_at_planning(name):
    says = rf"^run_configs\.n1_cpu\.env: {name}: the dynamic loader would load '/tmp/x\.so' into every process"
    with pytest.raises(PlanError, match=says):
        resolve({"preset": "cpu", "run_configs": {"n1_cpu": {"env": {name: "/tmp/x.so"}}}}, PRESETS, CPU_BOX)


@pytest.mark.parametrize("env", [{"LD_LIBRARY_PATH": "/usr/local/cuda/lib64"}, {"LD_PRELOAD": ""}])
def test_where_libraries_are_found_and_an_empty_preload_plan(env):
    resolved = resolve({"preset": "cpu", "run_defaults": {"env": env}}, PRESETS, CPU_BOX)
    assert resolved.run_configs["n1_cpu"].env == env
