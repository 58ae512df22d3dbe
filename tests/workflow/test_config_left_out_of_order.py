"""A run configuration the config gives but `order` does not name. Before, it was neither
judged nor run, and nothing said so: `run_configs: {ref_cpu: {trainer: unilab, devices:
cpu}}` planned (`2 runs of n1_cpu, n2_cpu`), while the same fields on n1_cpu are refused.
Now the config's own configurations are judged as the ordered ones are (the machine's CPUs
aside: one not run here may be meant for another machine), and planning names those left
out in one note. A preset's controls outside its order are neither (kept for a user to order)."""

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from sacscale.pipeline.runplan import Host, PlanError, left_out_of_order, resolve

REPO = Path(__file__).resolve().parents[2]
PRESETS = yaml.safe_load((REPO / "workflow" / "presets.yaml").read_text())
CPU_BOX = Host(cuda_devices=0, cpus=frozenset(range(2)))


def test_an_impossible_configuration_left_out_of_order_is_refused():
    with pytest.raises(PlanError, match=r"^run_configs\.ref_cpu\.devices: the reference trainer \(trainer: unilab\) "
                                        "trains on CUDA devices only"):
        resolve({"preset": "cpu", "run_configs": {"ref_cpu": {"trainer": "unilab", "devices": "cpu"}}}, PRESETS,
                CPU_BOX)


def test_one_left_out_is_judged_without_this_machines_cpus():
    """CPUs this machine lacks do not refuse a configuration that does not run here."""
    config = {"preset": "cpu", "run_configs": {"n1_big": {"devices": "cpu", "cpu_pools": "40-47", "description": "d"}}}
    plan = resolve(config, PRESETS, CPU_BOX)
    assert plan.order == ["n1_cpu", "n2_cpu"] and "n1_big" not in plan.run_configs
    assert left_out_of_order(config, plan.order) == ["n1_big"]


def test_a_presets_controls_outside_its_order_are_not_named():
    plan = resolve({"preset": "h200x1_shared"}, PRESETS, Host(cuda_devices=1, cpus=frozenset(range(64))))
    assert "n2_shared_nosync" in PRESETS["presets"]["h200x1_shared"]["run_configs"]
    assert left_out_of_order({"preset": "h200x1_shared"}, plan.order) == []


def test_planning_names_the_configurations_left_out(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text("preset: cpu\nrun_set: t25\nrun_configs:\n  n1_extra: {devices: cpu, description: d}\n")
    done = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--configfile", str(config)], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert ("sacscale: note: run_configs n1_extra: not in order (n1_cpu, n2_cpu), so checked but not run; name them "
            "in order to run them") in out, out
