"""The whole DAG with a stand-in trainer (tests/workflow/fake_sacscale.py): strict
alternating order, a failed run keeps the completed ones, a rerun resumes, verify."""

import zipfile

import pytest
from pipeline_helpers import (STAND_IN_RUNS, check_budget, check_run_set,
                              complete_stand_in_set, copy_of, fake_sacscale_env, runs_in_order, snakemake,
                              stand_in_first_run_done, stand_in_set_to_the_aggregate)

pytestmark = pytest.mark.slow

RUNS = STAND_IN_RUNS  # counterbalanced: AB BA


@pytest.fixture(scope="module")
def fake_env(tmp_path_factory):
    return fake_sacscale_env(tmp_path_factory.mktemp("fake") / "bin")


def test_failed_run_keeps_completed_runs_and_rerun_resumes(fake_env, tmp_path_factory, tmp_path):
    # run 2 fails: a copy of the session's set whose stages before it are done (a fresh set's
    # first invocation is pipeline_helpers.stand_in_first_run_done's)
    workflow_dir = copy_of(stand_in_first_run_done(tmp_path_factory), tmp_path / "wf")
    results = workflow_dir / "results" / "cpu"
    failing = {**fake_env, "FAKE_FAIL_RUN": "cpu_r1_n2_cpu"}
    first = snakemake(workflow_dir, "--cores", "all", env=failing)
    out = first.stdout + first.stderr
    assert first.returncode != 0
    assert "Error in rule train_run" in out
    assert (results / "runs" / "cpu_r1_n1_cpu" / "run.json").is_file()       # completed run kept
    assert not (results / "runs" / "cpu_r1_n2_cpu").exists()                  # never marked done
    assert not (results / "runs" / "cpu_r2_n2_cpu").exists()                  # later runs never started
    (attempt,) = (workflow_dir / "logs" / "cpu" / "attempts").iterdir()
    assert attempt.name.startswith("cpu_r1_n2_cpu.failed-")
    assert "failing on purpose" in (attempt / "train.log").read_text()
    kept_mtime = (results / "runs" / "cpu_r1_n1_cpu" / "run.json").stat().st_mtime_ns

    # an incomplete set is resumed only by the plan that made it
    other = snakemake(workflow_dir, "--cores", "all", "--config", "repeats=3", env=fake_env)
    assert other.returncode != 0 and "was made with a different plan (plan.json differs in" in other.stderr
    assert (results / "runs" / "cpu_r1_n1_cpu" / "run.json").stat().st_mtime_ns == kept_mtime

    second = snakemake(workflow_dir, "--cores", "all", env=fake_env)
    assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-3000:]
    # the terminal: a short message per job, the trainer's progress, where the results are
    out = second.stdout + second.stderr
    assert "training cpu_r2_n1_cpu (1 CPU rank, 24 iterations, run 4 of 4)" in out
    assert "training cpu_r2_n1_cpu: first learner update done at iteration 10" in out
    assert "training cpu_r2_n1_cpu: iteration 24/24 (learning), 800 env steps/s" in out
    assert "--resolved-json" not in out and "Shell command" not in out  # no 900-character commands
    assert "  report: reports/cpu/report.html" in out and "results/cpu/verify.json (passed;" in out
    assert "snakemake --report reports/cpu/audit.zip" in out
    assert (results / "runs" / "cpu_r1_n1_cpu" / "run.json").stat().st_mtime_ns == kept_mtime  # not rerun
    records = runs_in_order(results, RUNS)
    assert [r["resolved_config"]["config"] for r in records] == ["n1_cpu", "n2_cpu", "n2_cpu", "n1_cpu"]
    check_run_set(workflow_dir, "cpu", RUNS)
    # the best-evaluated run's policy stays (equal scores: the first run); the others' move out
    assert check_budget(workflow_dir, "cpu") == sorted(RUNS[1:])
    assert (results / "runs" / RUNS[0] / "checkpoints" / "final.pt").is_file()

    again = snakemake(workflow_dir, "--cores", "all", "-n", env=fake_env)
    assert "Nothing to be done" in again.stdout + again.stderr

    bundle = snakemake(workflow_dir, "--report", "report.zip", env=fake_env)
    assert bundle.returncode == 0, bundle.stderr[-3000:]
    with zipfile.ZipFile(workflow_dir / "report.zip") as z:
        names = z.namelist()
        joined = " ".join(names)
        for name in ("report.html", "report.md", "summary.csv", "scaling_bars.png", "cumulative_steps.png",
                     "learning_curves.png"):
            assert name in joined
        # untraced runs: no "not drawn" per-phase figure in the zip (nor in the report)
        assert "phase_times.png" not in joined
        # the audit zip holds the evidence, byte for byte, under the category "Evidence"
        for name in ("MANIFEST.sha256", "manifest.json", "verify.json", "environment.json", "correctness.json",
                     "model.json"):
            (member,) = [n for n in names if n.endswith(f"/{name}")]
            assert z.read(member) == (results / name).read_bytes(), name
        assert "Evidence" in z.read(next(n for n in names if n.endswith("report.html"))).decode()
    # tampering after the fact: test_pipeline_e2e.py::test_cpu_preset_tampering_is_caught (the real set)


def test_one_stage_reruns_alone_until_the_set_is_complete(fake_env, tmp_path_factory, tmp_path):
    # a copy of the session's set made up to the aggregate (`--until aggregate`, checked)
    workflow_dir = copy_of(stand_in_set_to_the_aggregate(tmp_path_factory), tmp_path / "wf")
    results = workflow_dir / "results" / "cpu"
    run_mtime = (results / "runs" / "cpu_r1_n1_cpu" / "run.json").stat().st_mtime_ns
    proc = snakemake(workflow_dir, "--cores", "1", "--forcerun", "analyze_run", "--until", "aggregate", env=fake_env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout + proc.stderr
    assert "metrics of cpu_r1_n1_cpu from its event files" in out and "summary of 4 runs" in out  # the messages
    assert "training cpu_" not in out and "probing data-parallel" not in out
    assert (results / "runs" / "cpu_r1_n1_cpu" / "run.json").stat().st_mtime_ns == run_mtime

    # once complete, the set is read-only: a rerun is refused before any job
    assert snakemake(workflow_dir, "--cores", "all", env=fake_env).returncode == 0
    before = {p: p.stat().st_mtime_ns for p in results.rglob("*")}
    refused = snakemake(workflow_dir, "--cores", "1", "--forcerun", "analyze_run", "--until", "aggregate", env=fake_env)
    assert refused.returncode != 0 and "run set 'cpu': results/cpu/ is complete" in refused.stderr
    assert {p: p.stat().st_mtime_ns for p in results.rglob("*")} == before


def test_a_fresh_clone_of_a_committed_set_plans_nothing(fake_env, tmp_path_factory, tmp_path):
    import subprocess

    # a set the stand-in completed (`snakemake --cores all`, checked), copied with its file times
    workflow_dir = copy_of(complete_stand_in_set(tmp_path_factory), tmp_path / "wf")
    (workflow_dir / ".gitignore").write_text("/logs/\n/benchmarks/\n.snakemake/\n__pycache__/\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false"]
    subprocess.run([*git, "init", "-q"], cwd=workflow_dir, check=True)
    subprocess.run([*git, "add", "-A"], cwd=workflow_dir, check=True)
    subprocess.run([*git, "commit", "-qm", "evidence"], cwd=workflow_dir, check=True)
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(workflow_dir), str(clone)], check=True)  # new file times
    dry = snakemake(clone, "-n", "--cores", "all", env=fake_env)
    out = dry.stdout + dry.stderr
    assert dry.returncode == 0 and "Nothing to be done" in out and "is read-only (committed)" in out
    assert snakemake(clone, "--cores", "all", env=fake_env).returncode == 0  # nothing run, nothing written
    assert snakemake(clone, "--cores", "1", "verify", env=fake_env).returncode == 0
    status = subprocess.run(["git", "status", "--porcelain"], cwd=clone, capture_output=True, text=True, check=True)
    assert status.stdout == ""


def test_interrupted_run_is_set_aside_and_the_next_invocation_resumes(fake_env, tmp_path_factory, tmp_path):
    import signal
    import subprocess
    import time

    import psutil
    from pipeline_helpers import SNAKEMAKE

    # from the second run on: a copy of a set whose earlier stages and first run are done
    workflow_dir = copy_of(stand_in_first_run_done(tmp_path_factory), tmp_path / "wf")
    results = workflow_dir / "results" / "cpu"
    marker = tmp_path / "hanging"  # outside the workflow: not evidence
    hanging = {**fake_env, "FAKE_HANG_RUN": "cpu_r1_n2_cpu", "FAKE_HANG_MARKER": str(marker)}
    proc = subprocess.Popen([SNAKEMAKE, "--cores", "all"], cwd=workflow_dir, env=hanging,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    def is_wrapper(p):
        cmd = p.cmdline()
        return "record-run" in cmd[1:3]  # [python, .../sacscale, record-run, ...]

    wrapper = None
    try:
        deadline = time.monotonic() + 300
        while wrapper is None and time.monotonic() < deadline:
            time.sleep(0.2)
            # the trainer has written its partial event file and hangs: the run is under way
            if marker.exists():
                wrapper = next((p for p in psutil.Process(proc.pid).children(recursive=True) if is_wrapper(p)), None)
        assert wrapper is not None, "run 2 never started"
        wrapper.send_signal(signal.SIGINT)  # what Ctrl-C delivers to the job's process group
        proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
        if wrapper is not None and wrapper.is_running():
            wrapper.terminate()  # it stops the trainer's process group
    assert proc.returncode != 0
    assert "received SIGINT" in (workflow_dir / "logs" / "cpu" / "train" / "cpu_r1_n2_cpu.log").read_text()
    assert not (results / "runs" / "cpu_r1_n2_cpu").exists()
    assert not (results / "runs" / ".cpu_r1_n2_cpu.partial").exists()
    (attempt,) = (workflow_dir / "logs" / "cpu" / "attempts").iterdir()
    assert attempt.name.startswith("cpu_r1_n2_cpu.interrupted-")
    kept_mtime = (results / "runs" / "cpu_r1_n1_cpu" / "run.json").stat().st_mtime_ns

    # the stage target `train` (every run's run.json): the matrix resumed from the interrupted
    # run; a resumed set completed to its report is test_failed_run_keeps_completed_runs_and_rerun_resumes'
    resumed = snakemake(workflow_dir, "--cores", "all", "train", env=fake_env)
    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr[-3000:]
    assert (results / "runs" / "cpu_r1_n1_cpu" / "run.json").stat().st_mtime_ns == kept_mtime
    runs_in_order(results, RUNS)
