"""The workflow's hook to the planner: `preset: planned` (what `auto` picks on a CUDA
machine no named preset fits exactly) plans from `sacscale plan-matrix` output."""

import json
import os

import yaml
from pipeline_helpers import REPO, snakemake

from sacscale.cli import main

FIXTURES = REPO / "tests" / "parallel" / "fixtures" / "topology"


def test_dry_run_plans_the_recorded_matrix(workflow_dir):
    matrix = workflow_dir / "matrix.json"
    assert main(["plan-matrix", "--lscpu", str(FIXTURES / "eight_gpu_2x56_smt.lscpu"),
                 "--nvidia-smi-topo", str(FIXTURES / "eight_gpu_2x56_smt.topo"), "--output", str(matrix)]) == 0
    (workflow_dir / "planned.yaml").write_text(yaml.safe_dump(
        {"preset": "planned", "host_checks": False, "repeats": 1, "planner": {"matrix": "matrix.json"}}))
    proc = snakemake(workflow_dir, "-n", "--cores", "1", "--configfile", "planned.yaml")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "sacscale: preset planned (named in the config; the matrix planned from the topology: 8 GPU(s)" in out
    assert "5 runs of n1_local, n2_pool, n4_pool, n8_pool, n1_total" in out
    assert json.loads(matrix.read_text())["configs"]["n4_pool"]["devices"] == "0,1,4,5"


def test_planning_on_a_machine_without_gpus_fails_naming_it(workflow_dir):
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}  # no GPU, whatever the machine has
    proc = snakemake(workflow_dir, "-n", "--cores", "1", "--config", "preset=planned", env=env)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "config error: planner: sacscale plan-matrix: error: no GPU" in out, out
    assert not (workflow_dir / "results").exists()
