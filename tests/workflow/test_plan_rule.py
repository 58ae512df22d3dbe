"""The `plan` rule's `run:` block runs in the invocation's own Snakemake process (the
workflow profile's force-use-threads), not in a second Snakemake that reads the workflow
again: what it writes is the same."""

import json

import yaml
from pipeline_helpers import REPO, snakemake

NOTE = "sacscale: preset cpu (preset auto: no CUDA device visible, so the CPU preset); run set cpu: 4 runs"


def test_the_workflow_profile_runs_run_blocks_in_its_own_process():
    profile = yaml.safe_load((REPO / "profiles/default/config.yaml").read_text())
    assert profile["force-use-threads"] is True


def test_the_plan_is_written_without_reading_the_workflow_again(workflow_dir):
    proc = snakemake(workflow_dir, "--cores", "1", "results/cpu/plan.json")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    # every reading of the workflow plans again and prints its plan: once, by this process
    assert proc.stderr.count(NOTE) == 1, proc.stderr
    plan = json.loads((workflow_dir / "results" / "cpu" / "plan.json").read_text())
    assert plan["preset"] == "cpu" and len(plan["runs"]) == 4
    log = (workflow_dir / "logs" / "cpu" / "plan.log").read_text()
    assert log == f"preset cpu: {plan['preset_reason']}; 4 runs\n"
    assert (workflow_dir / "benchmarks" / "cpu" / "plan.tsv").is_file()
