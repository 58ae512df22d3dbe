"""The `plan` rule's `run:` block runs in the invocation's own Snakemake process (the
workflow profile's force-use-threads), not in a second Snakemake that reads the workflow
again: what it writes is the same."""

import json
import os
import shutil
import subprocess

import pytest
import yaml
from pipeline_helpers import REPO, SNAKEMAKE, snakemake

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


# The plan rule's files: a folder at the log's name made its run: block end in a
# RuleException through sacscale's frames, and Snakemake's report of the failed job (which
# shows its log) in `--- Logging error ---` and two tracebacks. Now a folder at any log's name
# is refused before the first job, and any other error of the file system in the block is one
# line naming the file.
def test_a_folder_at_the_plan_log_is_refused_before_any_job(workflow_dir):
    (workflow_dir / "logs" / "cpu" / "plan.log" / "sub").mkdir(parents=True)
    proc = snakemake(workflow_dir, "--cores", "1", "results/cpu/plan.json")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert ("config error: run_set cpu: logs/cpu/plan.log: a folder stands at a log file's name; remove it "
            "(or move it away) and run again") in out
    assert "Logging error" not in out and "Traceback" not in out and "sacscale/" not in out
    assert "Job 0" not in out and not (workflow_dir / "results" / "cpu" / "plan.json").exists()


def test_a_folder_at_a_deeper_log_name_is_refused_too(workflow_dir):
    (workflow_dir / "logs" / "cpu" / "train" / "cpu_r1_n1_cpu.log").mkdir(parents=True)
    proc = snakemake(workflow_dir, "-n", "--cores", "1")
    assert proc.returncode == 1
    assert "logs/cpu/train/cpu_r1_n1_cpu.log: a folder stands at a log file's name" in proc.stdout + proc.stderr


FULL_LOGS = ("mount -t tmpfs -o size=4k,mode=0755 tmpfs logs/cpu && "
             "(dd if=/dev/zero of=logs/cpu/filler bs=4k count=2 2>/dev/null; true) && exec \"$@\"")


@pytest.mark.skipif(os.getuid() != 0 or not shutil.which("unshare"), reason="mounts a full tmpfs (root)")
def test_a_full_log_folder_is_one_line_naming_the_log(workflow_dir):
    (workflow_dir / "logs" / "cpu").mkdir(parents=True)
    if subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode != 0:
        pytest.skip("no mount namespace here")
    proc = subprocess.run(["unshare", "-m", "sh", "-c", FULL_LOGS, "sh", SNAKEMAKE, "--cores", "1",
                           "results/cpu/plan.json"], cwd=workflow_dir, capture_output=True, text=True, timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert ("plan of run set cpu not written: logs/cpu/plan.log: No space left on device; fix that file or "
            "folder (or make room) and run again") in out
    assert "Logging error" not in out and "Traceback" not in out and "sacscale/" not in out
    assert not (workflow_dir / "results" / "cpu" / "plan.json").exists()
