"""The terminal is quiet by default: the workflow profile silences Snakemake's banner, the
jobs' reasons and counts (and common.smk the scheduler's lines), so each job is its
one-line message; `--quiet host` brings the rest back; `snakemake verify` on a read-only
set prints no warning about local rules."""

import shutil

import yaml
from pipeline_helpers import REPO, snakemake
from snakemake.settings.enums import Quietness


def test_the_workflow_profile_sets_valid_quiet_choices():
    profile = yaml.safe_load((REPO / "profiles/default/config.yaml").read_text())
    choices = {q.name.lower() for q in Quietness}
    assert set(profile["quiet"]) <= choices, choices
    assert set(profile["quiet"]) == {"host", "reason", "progress"}  # never "rules": the job lines stay


def test_dry_run_is_one_line_per_job(workflow_dir):
    proc = snakemake(workflow_dir, "-n", "--cores", "1")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "Job 5: training cpu_r1_n1_cpu (1 CPU rank, 24 iterations, run 1 of 4)" in out
    assert "Reason:" not in out and "Job stats:" not in out and "Platform:" not in out
    # the target's message, not its inputs (every file of the set)
    assert "every output of results/cpu/ and reports/cpu/ is in place" in out
    assert "input: results/cpu/plan.json" not in out


def test_quiet_host_brings_back_counts_and_reasons(workflow_dir):
    proc = snakemake(workflow_dir, "-n", "--cores", "1", "--quiet", "host")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "Job stats:" in out and "Reason:" in out


def test_verify_on_a_read_only_set_does_not_warn_about_local_rules(workflow_dir):
    # a complete set (every output present) is read-only: only `all` and `verify` exist
    for tree in ("results", "reports"):
        shutil.copytree(REPO / tree / "h200x2", workflow_dir / tree / "h200x2")
    proc = snakemake(workflow_dir, "--cores", "1", "verify", "--config", "preset=h200x2", "run_set=h200x2",
                     "host_checks=False")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "read-only" in out, out
    assert "localrules" not in out, out
    # the job is its message: no scheduler lines, no banner, no reason, no counts
    assert "Job 0: verifying results/h200x2/ as it is now" in out
    for noise in ("Select jobs to execute", "Execute 1 jobs", "Reason:", "steps (100%) done", "Workflow ID"):
        assert noise not in out, noise
