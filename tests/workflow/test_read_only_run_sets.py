"""Committed and complete run sets are read-only to the pipeline: the commands that once
wrote into one, in a fresh clone fail before any job, naming the set, and leave git status
clean; `snakemake verify` still checks a committed set."""

import shutil
import subprocess

import pytest
from pipeline_helpers import REPO, copy_workflow, snakemake

from sacscale.evidence.runset import RunSetError, RunSetState, decide

GIT = ["git", "-c", "user.name=test", "-c", "user.email=test@example.invalid", "-c", "commit.gpgsign=false"]


def git(cwd, *args):
    return subprocess.run([*GIT, *args], cwd=cwd, capture_output=True, text=True, check=True).stdout


@pytest.fixture(scope="module")
def fresh_clone(tmp_path_factory):
    """A clone of this repository with the working tree's workflow committed on top (a
    fresh clone: every file has a new time)."""
    if not shutil.which("git") or subprocess.run(["git", "-C", str(REPO), "rev-parse"]).returncode:
        pytest.skip("needs the repository's git history")
    dest = tmp_path_factory.mktemp("clone") / "sacscale"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(REPO), str(dest)], check=True)
    for name in ("workflow", "profiles", "envs"):
        shutil.rmtree(dest / name)
    copy_workflow(dest)
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "--allow-empty", "-m", "the working tree's workflow")
    assert git(dest, "status", "--porcelain") == ""
    return dest


@pytest.mark.parametrize("args, run_set", [
    (["--cores", "2", "--config", "run_set=h200x2"], "h200x2"),
    (["--cores", "2", "--config", "preset=h200x1", "host_checks=False"], "h200x1"),
    (["-n", "--config", "preset=h200x2", "run_set=h200x2", "host_checks=False"], "h200x2"),
    (["--cores", "1", "--forcerun", "analyze_run", "--config", "preset=h200x2", "run_set=h200x2",
      "host_checks=False"], "h200x2"),
])
def test_issue_commands_on_committed_sets_fail_before_any_job(fresh_clone, args, run_set):
    proc = snakemake(fresh_clone, *args)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert f"run set '{run_set}': results/{run_set}/ holds committed evidence" in out
    assert "choose a new name" in out and f"--config run_set={run_set}_new" in out
    assert "verify_env" not in out and "train_run" not in out  # no job planned
    assert git(fresh_clone, "status", "--porcelain") == ""


def test_verify_still_checks_a_committed_set(fresh_clone):
    proc = snakemake(fresh_clone, "--cores", "1", "verify", "--config", "preset=h200x2", "run_set=h200x2",
                     "host_checks=False")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "verified" in proc.stdout + proc.stderr
    assert git(fresh_clone, "status", "--porcelain") == ""


def test_a_new_name_is_not_refused(fresh_clone):
    proc = snakemake(fresh_clone, "-n", "--cores", "1", "--config", "run_set=cpu_new")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "train_run" in proc.stdout + proc.stderr


def _state(**kw):
    return RunSetState(**{"name": "s", "results": "results/s", "reports": "reports/s", **kw})


@pytest.mark.parametrize("state, targets, forcing, expected", [
    (_state(), set(), False, "write"),                                                  # new
    (_state(files=3, plan_found=True), set(), False, "write"),                           # resume
    (_state(files=3, plan_found=True, complete=True), set(), False, "read-only"),        # nothing to do
    (_state(files=3, plan_found=True, committed=3), {"all"}, False, "read-only"),
    (_state(files=3, committed=3), {"verify"}, False, "read-only"),                      # verify: always
    (_state(files=3, plan_found=True, plan_differences=["repeats"]), {"verify"}, False, "read-only"),
])
def test_decisions(state, targets, forcing, expected):
    assert decide(state, targets, forcing) == expected


@pytest.mark.parametrize("state, targets, forcing, message", [
    (_state(files=3, plan_found=True, plan_differences=["repeats"]), set(), False,
     "different plan (plan.json differs in repeats)"),
    (_state(files=3), set(), False, "has no plan.json"),
    (_state(files=3, plan_found=True, complete=True), set(), True, "is complete"),
    (_state(files=3, plan_found=True, committed=2), {"results/s/summary.json"}, False, "2 file(s) tracked by git"),
    (_state(files=3, plan_found=True, committed=2), None, False, "holds committed evidence"),
])
def test_refusals_name_the_set(state, targets, forcing, message):
    with pytest.raises(RunSetError, match="run set 's'") as err:
        decide(state, targets, forcing)
    assert message in str(err.value) and "choose a new name" in str(err.value)
