"""A trainer probe too short for its learner to update (`probe.trainer_iterations: 1`)
passed planning; the probe then reported `FAIL ... learner_updated, sync_within_tolerance`,
a broken gradient sync where nothing had been synced. The planner and `sacscale probe`
refuse it, naming the fewest iterations that compare gradients."""

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from sacscale.pipeline.plan_values import PROBE_FEWEST_ITERATIONS
from sacscale.pipeline.runplan import Host, PlanError, resolve
from sacscale.train.probe import TrainerProbeSettings, fewest_iterations

REPO = Path(__file__).resolve().parents[2]
PRESETS = yaml.safe_load((REPO / "workflow" / "presets.yaml").read_text())
CPU_BOX = Host(cuda_devices=0, cpus=frozenset(range(2)))


def _probe(trainer_iterations):
    return {"devices": "cpu,cpu", "iterations": 2, "trainer_iterations": trainer_iterations}


def test_the_planners_bound_is_the_probes_own():
    assert PROBE_FEWEST_ITERATIONS == fewest_iterations(TrainerProbeSettings(["cpu", "cpu"]))


@pytest.mark.parametrize("iterations", [1, PROBE_FEWEST_ITERATIONS - 1])
def test_a_trainer_probe_too_short_to_update_is_refused_at_planning(iterations):
    with pytest.raises(PlanError, match=rf"probe\.trainer_iterations: {iterations}: the probe's learner first "
                                        rf"updates in iteration {PROBE_FEWEST_ITERATIONS}"):
        resolve({"preset": "cpu", "probe": _probe(iterations)}, PRESETS, CPU_BOX)


@pytest.mark.parametrize("iterations", [0, PROBE_FEWEST_ITERATIONS])
def test_no_trainer_probe_or_one_that_updates_plans(iterations):
    resolve({"preset": "cpu", "probe": _probe(iterations)}, PRESETS, CPU_BOX)


def test_the_probe_command_refuses_it_before_any_rank_starts(tmp_path):
    done = subprocess.run([sys.executable, "-m", "sacscale.cli", "probe", "trainer", "--devices", "cpu,cpu",
                           "--trainer-iterations", "1", "--output", str(tmp_path / "p.json")],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == (f"sacscale probe: error: --trainer-iterations 1: the learner first updates in "
                                   f"iteration {PROBE_FEWEST_ITERATIONS} (once its replay holds its learning "
                                   f"start's rows); give at least {PROBE_FEWEST_ITERATIONS}")
    assert not (tmp_path / "p.json").exists()
