"""A run configuration's description with no visible text. Before: `description: "   "`
passed planning and the report described the configuration with nothing. Now planning
refuses it in one line naming the key."""

from pathlib import Path

import pytest
import yaml

from sacscale.pipeline.runplan import Host, PlanError, resolve

ROOT = Path(__file__).resolve().parents[2]
PRESETS = yaml.safe_load((ROOT / "workflow" / "presets.yaml").read_text())
CPU_BOX = Host(cuda_devices=0, cpus=frozenset(range(2)))


def plan(description):
    return resolve({"preset": "cpu", "run_configs": {"n1_cpu": {"description": description}}}, PRESETS, CPU_BOX)


@pytest.mark.parametrize("description", ["   ", "", "\u00a0\u3000"])
def test_a_description_with_no_visible_text_is_refused(description):
    with pytest.raises(PlanError) as err:
        plan(description)
    assert str(err.value) == (f"run_configs.n1_cpu.description: {description!r} holds no visible text; describe "
                              "the configuration, or leave the key out")


def test_a_blank_description_from_the_run_defaults_is_named_there():
    config = {"preset": "cpu", "run_configs": {"mine": {"devices": "cpu"}}, "order": ["mine"],
              "run_defaults": {"description": "  "}}
    with pytest.raises(PlanError, match=r"^run_defaults\.description: '  ' holds no visible text"):
        resolve(config, PRESETS, CPU_BOX)


def test_a_description_with_text_is_kept():
    assert plan(" a CPU run ").run_configs["n1_cpu"].description == " a CPU run "
