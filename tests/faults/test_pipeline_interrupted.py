"""Fault 4: the pipeline interrupted during the training matrix (SIGINT/SIGTERM).

The whole DAG runs with a stand-in trainer (tests/faults/slow_sacscale.py over
tests/workflow/fake_sacscale.py); the second run of the matrix is slow or hangs, and the
signal arrives while it runs. Each test starts from a copy of one set where an earlier
invocation did everything before that run (environment, model, probe, the first run and
its metrics): the same state as a first invocation reaching the second run, made once. Two ways to deliver it:

* to Snakemake's process group (Ctrl-C at a terminal, `kill -TERM -PGID`, a batch
  system's cancel): the run wrapper forwards it to the trainer, the run is set aside under
  logs/<run set>/attempts/ and Snakemake exits non-zero at once;
* to the Snakemake process alone (`kill PID`): Snakemake stops scheduling and waits for
  the running run (at most its timeout_s), so that run ends complete or not at all.

Guarantees checked: the invocation exits non-zero within a bound; completed runs and
their metrics stay untouched; a run directory holding run.json is complete at every
moment (sampled every 20 ms throughout); no process of the pipeline is left; the next
invocation continues from the interrupted run: after SIGINT to the group it ends with the
same structure of results and report as an uninterrupted pipeline; after a signal to
Snakemake alone it is followed through the training matrix (the stage target `train`),
where the two ways differ: what comes after the last run is the same in both.

(tests/workflow/test_pipeline_fake_trainer.py covers SIGINT to the run wrapper alone and
a failing run.)
"""

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest
from faultkit import describe, record
from pipeline_helpers import (SNAKEMAKE, STAND_IN_RUNS, check_run_set, complete_stand_in_set, copy_of, runs_in_order,
                              snakemake, stand_in_first_run_done)

pytestmark = pytest.mark.slow

RUNS = STAND_IN_RUNS  # counterbalanced
VICTIM = RUNS[1]
STAND_IN = Path(__file__).resolve().parent / "slow_sacscale.py"


def stand_in_env(base: Path) -> dict:
    bindir = base / "bin"
    bindir.mkdir(parents=True, exist_ok=True)
    exe = bindir / "sacscale"
    exe.write_text(f"#!{sys.executable}\nimport runpy, sys\nsys.argv[0] = {str(STAND_IN)!r}\n"
                   f"runpy.run_path({str(STAND_IN)!r}, run_name='__main__')\n")
    exe.chmod(0o755)
    markers = base / "markers"
    markers.mkdir(exist_ok=True)
    path = os.pathsep.join([str(bindir), os.path.dirname(sys.executable), os.environ["PATH"]])
    return {**os.environ, "PATH": path, "FAKE_MARKER_DIR": str(markers)}


def structure(workdir: Path) -> dict:
    """What a finished run set looks like, independent of times and host: the files
    under results/ and reports/ (event file names normalised), the report's headings
    and table headers, the summary's configurations and comparisons."""
    files = set()
    for top in ("results", "reports"):
        for path in (workdir / top).rglob("*"):
            if path.is_file():
                rel = path.relative_to(workdir).as_posix()
                files.add(re.sub(r"events\.out\.tfevents\..*$", "events.out.tfevents.*", rel))
    md = (workdir / "reports" / "cpu" / "report.md").read_text().splitlines()
    outline = [line for i, line in enumerate(md)
               if line.startswith("#") or (line.startswith("|") and i + 1 < len(md) and md[i + 1].startswith("|--"))]
    summary = json.loads((workdir / "results" / "cpu" / "summary.json").read_text())
    return {"files": sorted(files), "report_outline": outline, "summary_keys": sorted(summary),
            "comparisons": [(c.get("baseline"), c.get("candidate")) for c in summary["comparisons"]]}


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """An uninterrupted pipeline with the same stand-in trainer (slow_sacscale.py without
    FAKE_SLOW_RUN is fake_sacscale.py): the session's completed stand-in set, shared with
    tests/workflow/test_pipeline_fake_trainer.py."""
    workdir = complete_stand_in_set(tmp_path_factory)
    check_run_set(workdir, "cpu", RUNS)
    return structure(workdir)


class DoneMeansComplete(threading.Thread):
    """Samples results/cpu/runs/ every 20 ms: a run directory with run.json must hold a
    completed record and rank 0's events. Violations are collected, not raised."""

    def __init__(self, runs: Path):
        super().__init__(daemon=True)
        self.runs, self.violations, self.samples = runs, [], 0
        self.halt = threading.Event()

    def run(self):
        while not self.halt.wait(0.02):
            self.samples += 1
            for run_json in self.runs.glob("*/run.json"):
                run_dir = run_json.parent
                if run_dir.name.startswith("."):
                    continue  # a work directory: the wrapper writes run.json there just before the rename
                try:
                    status = json.loads(run_json.read_text())["status"]
                    events = list((run_dir / "tb" / "rank0").glob("events.out.tfevents.*"))
                except FileNotFoundError:
                    continue  # moved aside between the listing and the read: not a done run
                except (json.JSONDecodeError, KeyError) as exc:
                    self.violations.append(f"{run_dir.name}: unreadable run.json ({exc})")
                    continue
                if status != "completed" or not events:
                    self.violations.append(f"{run_dir.name}: run.json status {status}, {len(events)} event file(s)")

    def stop(self):
        self.halt.set()
        self.join(5)
        return self.violations


@pytest.fixture
def seen():
    """The pipeline's processes, as seen just before the signal; whatever of them is
    still alive at teardown is killed (after the test has checked)."""
    procs: dict[int, psutil.Process] = {}
    yield procs
    for p in procs.values():
        try:
            p.kill()
        except psutil.Error:
            pass


def interrupt(workdir: Path, env: dict, sig: int, to_group: bool, slow_s: str, seen: dict):
    """Start the pipeline, send `sig` while the second run trains, wait for the end.
    Fills `seen` with its processes just before the signal (the trainer runs in a session
    of its own, so they are tracked by pid). Returns (exit status, output, seconds from
    the signal to the exit)."""
    env = {**env, "FAKE_SLOW_RUN": VICTIM, "FAKE_SLOW_S": slow_s}
    log = workdir / "snakemake.out"
    with open(log, "wb") as out:
        # SIGINT at its default, whatever this process inherited: a suite started in the
        # background of a non-interactive shell (`cmd &`) ignores SIGINT, Snakemake would
        # inherit that (Python installs no KeyboardInterrupt handler then) and go on
        proc = subprocess.Popen([SNAKEMAKE, "--cores", "all"], cwd=workdir, env=env, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        marker = Path(env["FAKE_MARKER_DIR"]) / f"{VICTIM}.started"
        deadline = time.monotonic() + 240
        while not marker.exists():
            assert proc.poll() is None, log.read_text()[-3000:]
            assert time.monotonic() < deadline, "the second run never started"
            time.sleep(0.1)
        time.sleep(0.5)
        for p in psutil.Process(proc.pid).children(recursive=True):
            seen[p.pid] = p  # wrapper, trainer (in its own session), shells
        t_sig = time.monotonic()
        if to_group:
            os.killpg(proc.pid, sig)
        else:
            os.kill(proc.pid, sig)
        code = proc.wait(180)
        elapsed = time.monotonic() - t_sig
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    time.sleep(0.5)
    return code, log.read_text(), elapsed


def trained(output: str) -> list[str]:
    """The runs a Snakemake invocation trained (train_run jobs, in order: their messages,
    `training RUN (..., run K of N)`, which Snakemake prints instead of the rule's header)."""
    return re.findall(r"^(?:Job \d+: )?training (\S+) \(.*, run \d+ of \d+\)$", output, re.M)


def alive(seen: dict) -> list[str]:
    left = []
    for p in seen.values():
        try:
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE:
                left.append(p)
        except psutil.Error:
            pass
    return describe(left)


# The resume after SIGTERM is SIGINT's: both leave the same state (the run set aside as
# interrupted, nothing after it started; checked for each below), and the next invocation
# reads only that state. So it runs after SIGINT alone (~30 s of stand-in pipeline each).
@pytest.mark.parametrize("sig, resume", [(signal.SIGINT, True), (signal.SIGTERM, False)],
                         ids=["SIGINT-and-resume", "SIGTERM"])
def test_signal_to_the_process_group_sets_the_run_aside_and_resume_completes(tmp_path, tmp_path_factory, reference,
                                                                              seen, sig, resume):
    workdir = copy_of(stand_in_first_run_done(tmp_path_factory), tmp_path / "wf")
    env = stand_in_env(tmp_path)
    results = workdir / "results" / "cpu"
    watch = DoneMeansComplete(results / "runs")
    watch.start()
    code, out, elapsed = interrupt(workdir, env, sig, to_group=True, slow_s="3600", seen=seen)
    left = alive(seen)
    name = signal.Signals(sig).name
    record("pipeline interrupted", signal=name, delivered_to="process group", exit_status=code,
           exit_after_s=round(elapsed, 2), left=left)

    assert code != 0
    assert elapsed < 40  # the wrapper's SIGTERM to the trainer; its grace (30 s) is not needed here
    assert left == [], left
    assert f"received {name}" in (workdir / "logs" / "cpu" / "train" / f"{VICTIM}.log").read_text()
    # completed work stays, the interrupted run is nowhere in results/ but kept for diagnosis
    assert (results / "runs" / RUNS[0] / "run.json").is_file()
    assert (results / "metrics" / f"{RUNS[0]}.json").is_file()
    kept = {p: p.stat().st_mtime_ns for p in (results / "runs" / RUNS[0], results / "metrics")
            for p in ([p] if p.is_file() else sorted(p.rglob("*")))}
    assert not (results / "runs" / VICTIM).exists()
    assert not list((results / "runs").glob(".*"))
    (attempt,) = (workdir / "logs" / "cpu" / "attempts").iterdir()
    assert attempt.name.startswith(f"{VICTIM}.interrupted-")
    assert json.loads((attempt / "run.json").read_text())["interrupted_by"] == name
    assert not (results / "runs" / RUNS[2]).exists()  # nothing after the interrupted run started
    if not resume:
        violations = watch.stop()
        assert violations == [] and watch.samples > 100
        return

    resumed = snakemake(workdir, "--cores", "all", env=env)
    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr[-3000:]
    violations = watch.stop()
    assert violations == [] and watch.samples > 100
    assert {p: p.stat().st_mtime_ns for p in kept} == kept  # run 1 and its metrics were not redone
    assert trained(resumed.stdout + resumed.stderr) == RUNS[1:]  # from the interrupted run on
    runs_in_order(results, RUNS)
    check_run_set(workdir, "cpu", RUNS)
    assert structure(workdir) == reference


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_signal_to_snakemake_alone_lets_the_run_finish_and_resume_completes(tmp_path, tmp_path_factory, seen, sig):
    """Snakemake's own handling: SIGTERM is 'finish running jobs, start none'; SIGINT is
    'cancel', which still waits for the running job. Either way the run ends complete
    (the wrapper renames it into place) and nothing after it starts. After SIGINT
    Snakemake marks that output incomplete, so the next invocation reruns it; the wrapper
    keeps the earlier copy under logs/<run set>/attempts/ as superseded."""
    slow_s = 4.0
    workdir = copy_of(stand_in_first_run_done(tmp_path_factory), tmp_path / "wf")
    env = stand_in_env(tmp_path)
    results = workdir / "results" / "cpu"
    watch = DoneMeansComplete(results / "runs")
    watch.start()
    code, out, elapsed = interrupt(workdir, env, sig, to_group=False, slow_s=str(slow_s), seen=seen)
    left = alive(seen)
    name = signal.Signals(sig).name
    record("pipeline interrupted", signal=name, delivered_to="snakemake only", exit_status=code,
           exit_after_s=round(elapsed, 2), left=left)

    assert code != 0, out[-4000:]
    assert elapsed < slow_s + 30  # the running run's remaining time, then Snakemake's shutdown
    assert left == [], left
    done = json.loads((results / "runs" / VICTIM / "run.json").read_text())
    assert done["status"] == "completed" and done["exit_status"] == 0
    assert not (results / "runs" / RUNS[2]).exists()  # no new run started after the signal
    kept = {p: p.stat().st_mtime_ns for p in sorted((results / "runs" / RUNS[0]).rglob("*"))}

    resumed = snakemake(workdir, "--cores", "all", "train", env=env)
    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr[-3000:]
    violations = watch.stop()
    assert violations == [] and watch.samples > 100
    assert {p: p.stat().st_mtime_ns for p in kept} == kept
    rerun = trained(resumed.stdout + resumed.stderr)
    attempts = workdir / "logs" / "cpu" / "attempts"
    if sig == signal.SIGTERM:  # the finished run counts as done: the matrix continues after it
        assert rerun == RUNS[2:]
        assert not any(attempts.iterdir())  # the run wrapper makes the attic at its start
    elif rerun == RUNS[2:]:  # SIGINT, but Snakemake recorded the run's success before it stopped
        assert not any(attempts.iterdir())
    else:  # Snakemake marked it incomplete: it is redone, the earlier copy kept (its events and log;
        # Snakemake itself deletes the incomplete output, run.json, before the rerun)
        assert rerun == RUNS[1:]
        (copy,) = attempts.iterdir()
        assert copy.name.startswith(f"{VICTIM}.superseded-")
        assert list((copy / "tb" / "rank0").glob("events.out.tfevents.*")) and (copy / "train.log").is_file()
    records = runs_in_order(results, RUNS)
    assert all(r["status"] == "completed" and r["exit_status"] == 0 for r in records)


def test_sigkill_of_the_pipeline_leaves_no_trainer_behind(tmp_path, tmp_path_factory, seen):
    workdir = copy_of(stand_in_first_run_done(tmp_path_factory), tmp_path / "wf")
    env = stand_in_env(tmp_path)
    code, out, elapsed = interrupt(workdir, env, signal.SIGKILL, to_group=True, slow_s="3600", seen=seen)
    deadline = time.monotonic() + 10
    while alive(seen) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = alive(seen)
    record("pipeline SIGKILL", exit_status=code, left=left)
    assert code == -signal.SIGKILL
    assert left == [], left
