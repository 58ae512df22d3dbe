"""Run environments of the eighth hardening pass that passed planning and failed the run:
variables a library reads as the trainer imports it (TORCH_LOGS=nonsense: `ValueError:
Invalid log settings` at the run's start; MUJOCO_GL=nonsense: the collector's traceback),
and PYTHONINSPECT, which opens Python's prompt when the trainer ends (with no input the
completed run exited 1 with a `SystemExit` traceback)."""

from pathlib import Path

import pytest
import yaml

from sacscale.pipeline.runplan import Host, PlanError, resolve

PRESETS = yaml.safe_load((Path(__file__).resolve().parents[2] / "workflow" / "presets.yaml").read_text())
CPU_BOX = Host(cuda_devices=0, cpus=frozenset(range(2)))


def plan(env):
    return resolve({"preset": "cpu", "run_defaults": {"env": env}}, PRESETS, CPU_BOX)


@pytest.mark.parametrize("env, says", [
    ({"MUJOCO_GL": "nonsense"}, r"MUJOCO_GL as given stop\(s\) the trainer's import of mujoco \(RuntimeError: "
                                r"invalid value for environment variable MUJOCO_GL: nonsense\)"),
    ({"TORCH_LOGS": "nonsense"}, r"TORCH_LOGS as given stop\(s\) the trainer's import of torch \(ValueError: "
                                 r"Invalid log settings: nonsense"),
    ({"PYTHONINSPECT": "1"}, r"PYTHONINSPECT: Python would open its interactive prompt when the trainer ends"),
])
def test_a_variable_that_stops_the_trainer_at_its_start_or_end_is_refused_at_planning(env, says):
    with pytest.raises(PlanError, match=r"\.env \(preset cpu\): " + says):
        plan(env)
