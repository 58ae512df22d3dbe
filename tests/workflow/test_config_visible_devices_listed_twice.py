"""A run configuration's cuda_visible_devices that lists one GPU twice. Before: `"0,0"`
passed planning, though the run's two devices are then one GPU. Now it is refused at
planning, naming the key (ranks that share a GPU say so in `devices`)."""

from pathlib import Path

import pytest
import yaml

from sacscale.pipeline.runplan import Host, PlanError, resolve

PRESETS = yaml.safe_load((Path(__file__).resolve().parents[2] / "workflow" / "presets.yaml").read_text())
BIG_BOX = Host(cuda_devices=8, cpus=frozenset(range(64)))


@pytest.mark.parametrize("value, twice", [("0,0", "0"), ("3,1,03", "03"), ("GPU-8f2a,1,GPU-8f2a", "GPU-8f2a")])
def test_a_device_listed_twice_is_refused_at_planning(value, twice):
    says = rf"^run_configs\.n2_pool\.cuda_visible_devices: '{value}' lists the device '{twice}' twice; list each GPU"
    with pytest.raises(PlanError, match=says):
        resolve({"preset": "h200x2", "run_configs": {"n2_pool": {"cuda_visible_devices": value}}}, PRESETS, BIG_BOX)


def test_two_ranks_on_one_gpu_are_said_in_devices_and_plan():
    resolved = resolve({"preset": "h200x2", "run_configs": {"n2_pool": {"cuda_visible_devices": "4,5"}}},
                       PRESETS, BIG_BOX)
    assert resolved.run_configs["n2_pool"].cuda_visible_devices == "4,5"
