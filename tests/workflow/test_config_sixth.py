"""Config values of the sixth hardening pass that passed planning and broke a run later:
PYTHONWARNINGS with an `error` action (Python starts, then the first library warning ends
the run, after the model and the probe)."""

from pathlib import Path

import pytest
import yaml

from sacscale.pipeline.runplan import Host, PlanError, resolve

PRESETS = yaml.safe_load((Path(__file__).resolve().parents[2] / "workflow" / "presets.yaml").read_text())
CPU_BOX = Host(cuda_devices=0, cpus=frozenset(range(2)))


def plan(**config):
    return resolve({"preset": "cpu", **config}, PRESETS, CPU_BOX)


@pytest.mark.parametrize("value", ["error", "e", "ERR", "ignore,error::DeprecationWarning", " error:::mod"])
def test_warnings_made_errors_are_refused(value):
    with pytest.raises(PlanError, match=r"\.env \(preset cpu\): PYTHONWARNINGS: its filter .* an error"):
        plan(run_defaults={"env": {"PYTHONWARNINGS": value}})


@pytest.mark.parametrize("value", ["ignore", "default", "ignore::DeprecationWarning,always::UserWarning", ""])
def test_warning_filters_that_end_nothing_pass(value):
    plan(run_defaults={"env": {"PYTHONWARNINGS": value}})
