"""Run environments that passed planning and failed the run:
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
    with pytest.raises(PlanError, match=r"run_defaults\.env: " + says):
        plan(env)


@pytest.mark.parametrize("extra, says", [
    ('{"batch_size": 99999999999999999999}', r"batch_size is set by the trainer's own option --batch-size .*: give "
                                             r"it as the run configuration's batch_size, not in extra"),
    ('{"learning_starts": 1000000, "target_entropy": -1}',
     r"learning starts at 1000000 rows \(--extra learning_starts\) but the replay"),
    ('{"learning_starts": 1000000}', r"learning starts at 1000000 rows \(--extra learning_starts\) but the replay"),
])
def test_extra_sizes_the_trainer_refuses_at_its_start_are_refused_at_planning(extra, says):
    """The plan checked the run configuration's batch_size against the replay, not the one
    `--extra` sets (the trainer's start refused it, exit 2, after the probe and the runs before)."""
    with pytest.raises(PlanError, match=r"run_configs\.n1_cpu\.overrides\.extra: " + says):
        resolve({"preset": "cpu", "run_configs": {"n1_cpu": {"overrides": {"extra": extra}}}}, PRESETS, CPU_BOX)
