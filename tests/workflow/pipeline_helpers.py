"""Helpers of the workflow tests: a copy of the workflow, running Snakemake in it, checks
of a finished run set."""

import fcntl
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
WORKFLOW_FILES = ["Snakefile", "config.yaml", "workflow", "profiles", "envs"]
SNAKEMAKE = str(Path(sys.executable).parent / "snakemake")
FAKE_SACSCALE = Path(__file__).resolve().parent / "fake_sacscale.py"
STAND_IN_RUNS = ["cpu_r1_n1_cpu", "cpu_r1_n2_cpu", "cpu_r2_n2_cpu", "cpu_r2_n1_cpu"]  # counterbalanced: AB BA


def copy_workflow(dest: Path) -> Path:
    """The repository's workflow files, copied into dest (the package stays installed)."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in WORKFLOW_FILES:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, dest / name)
    return dest


def fake_sacscale_env(bindir: Path) -> dict:
    """The environment of a pipeline with the stand-in trainer: fake_sacscale.py installed
    as `sacscale` in bindir, first on PATH."""
    bindir.mkdir(parents=True, exist_ok=True)
    exe = bindir / "sacscale"
    exe.write_text(f"#!{sys.executable}\n" + FAKE_SACSCALE.read_text())
    exe.chmod(0o755)
    return {**os.environ,
            "PATH": f"{bindir}{os.pathsep}{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}"}


def _shared_folder(tmp_path_factory) -> Path:
    """The temporary folder of the whole test run: under pytest-xdist every worker has its
    own base folder, and their parent is the run's; without xdist, the base folder."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if "PYTEST_XDIST_WORKER" in os.environ else base


def _built_once(tmp_path_factory, name: str, build) -> Path:
    """`build(workdir)` run once per test run, whichever xdist worker asks first (the
    others wait on a file lock, then find it done); returns the workflow copy it made."""
    root = _shared_folder(tmp_path_factory)
    workdir, done = root / name / "wf", root / f"{name}.done"
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            shutil.rmtree(root / name, ignore_errors=True)  # a worker's failed attempt
            build(workdir)
            done.touch()
    return workdir


def _do_the_first_run(workdir: Path) -> None:
    copy_workflow(workdir)
    first = STAND_IN_RUNS[0]
    proc = snakemake(workdir, "--cores", "all", f"results/cpu/metrics/{first}.json",
                     f"results/cpu/eval/{first}.json", env=fake_sacscale_env(workdir.parent / "bin"))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert sorted(p.name for p in (workdir / "results" / "cpu" / "runs").iterdir()) == [first]


def stand_in_first_run_done(tmp_path_factory) -> Path:
    """A workflow copy where the stand-in trainer has done the default run set (cpu) up to
    its first run, that run's metrics and evaluation included: what every invocation of
    the set makes before the matrix's second run. Made once per test run, for the
    tests that interrupt or fail the second run; copy it, do not change it."""
    return _built_once(tmp_path_factory, "stand_in_first_run_done", _do_the_first_run)


def _run_to_the_aggregate(workdir: Path, tmp_path_factory) -> None:
    copy_of(stand_in_first_run_done(tmp_path_factory), workdir)
    proc = snakemake(workdir, "--cores", "all", "--until", "aggregate", env=fake_sacscale_env(workdir.parent / "bin"))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    results = workdir / "results" / "cpu"
    assert sorted(p.name for p in (results / "runs").iterdir()) == sorted(STAND_IN_RUNS)
    assert (results / "summary.json").is_file() and not (results / "manifest.json").exists()


def stand_in_set_to_the_aggregate(tmp_path_factory) -> Path:
    """The first-run set of stand_in_first_run_done, continued by `--until aggregate`: every
    run trained, analysed and evaluated and the summary written, but no report, manifest
    or verify yet (an incomplete set, so stages may still rerun). Made once per test run;
    copy it, do not change it."""
    return _built_once(tmp_path_factory, "stand_in_set_to_the_aggregate",
                       lambda workdir: _run_to_the_aggregate(workdir, tmp_path_factory))


def _complete_the_set(workdir: Path, tmp_path_factory) -> None:
    copy_of(stand_in_set_to_the_aggregate(tmp_path_factory), workdir)
    proc = snakemake(workdir, "--cores", "all", env=fake_sacscale_env(workdir.parent / "bin"))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    check_run_set(workdir, "cpu", STAND_IN_RUNS)


def complete_stand_in_set(tmp_path_factory) -> Path:
    """A workflow copy whose default run set (cpu) the stand-in trainer has completed, made
    once per test run for the tests that only read a finished set or start from a copy
    of one: the set of stand_in_set_to_the_aggregate, completed by `snakemake --cores all`
    (three invocations in all, each continuing the one before; a fresh set completed by
    one invocation is test_pipeline_two_trainers' and test_pipeline_e2e's). Do not change
    it: copy it."""
    return _built_once(tmp_path_factory, "complete_stand_in_set",
                       lambda workdir: _complete_the_set(workdir, tmp_path_factory))


def copy_of(workdir: Path, dest: Path) -> Path:
    """A copy of a workflow directory with its file times (Snakemake reads them)."""
    shutil.copytree(workdir, dest, symlinks=True)
    return dest


def snakemake(workdir: Path, *args: str, timeout: float = 600, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([SNAKEMAKE, *args], cwd=workdir, capture_output=True, text=True, timeout=timeout, env=env)


def runs_in_order(results: Path, names: list[str]) -> list[dict]:
    """The runs' run.json records; asserts they ran one at a time in the given order."""
    records = [json.loads((results / "runs" / name / "run.json").read_text()) for name in names]
    for before, after in zip(records, records[1:]):
        assert before["end_time"] <= after["start_time"], (before["run"], after["run"])
    return records


def check_run_set(workdir: Path, run_set: str, names: list[str]) -> None:
    """Every artefact of a finished run set is present and consistent."""
    results, reports = workdir / "results" / run_set, workdir / "reports" / run_set
    for name in ("plan.json", "environment.json", "source.diff", "model.json", "correctness.json", "summary.csv",
                 "summary.json", "MANIFEST.sha256", "manifest.json", "verify.json"):
        assert (results / name).is_file(), name
    for run in names:
        run_dir = results / "runs" / run
        record = json.loads((run_dir / "run.json").read_text())
        assert record["status"] == "completed" and record["exit_status"] == 0
        assert record["command"][:2] == ["sacscale", "train"] and record["seed"] is not None
        assert (run_dir / "train.log").is_file()
        assert list((run_dir / "tb" / "rank0").glob("events.out.tfevents.*"))
        metrics = json.loads((results / "metrics" / f"{run}.json").read_text())
        assert metrics["steady_env_steps_per_s"] > 0
    assert not list((results / "runs").glob(".*"))  # no partial run directories left
    assert json.loads((results / "verify.json").read_text())["ok"] is True
    assert json.loads((results / "correctness.json").read_text())["pass"] is True
    summary = json.loads((results / "summary.json").read_text())
    assert summary["comparisons"] and summary["comparisons"][0]["ratio_of_means"] > 0
    md = (reports / "report.md").read_text()
    assert "| configuration |" in md and "ratio of means" in md
    assert (reports / "report.html").is_file()
    for png in ("throughput_by_repeat", "scaling_bars", "cumulative_steps", "return_vs_time", "phase_times",
                "learning_curves"):
        assert (reports / "figures" / f"{png}.png").stat().st_size > 0
    assert "![learning curves](figures/learning_curves.png)" in md  # read from the runs' event files
    listed = (results / "MANIFEST.sha256").read_text()
    assert f"runs/{names[0]}/run.json" in listed and "environment.json" in listed
    check_budget(workdir, run_set)
    check_whole_page(results)


def check_whole_page(results: Path) -> None:
    """The finished set verifies with its whole page compared: the page the pipeline wrote is
    the one verify composes again from the set's evidence."""
    from sacscale.evidence.verify import verify

    done = verify(results)
    assert done.ok, done.problems()
    assert "both pages compared line by line with the page composed again from the evidence" in done.report_check


def check_budget(workdir: Path, run_set: str) -> list[str]:
    """A set made by the pipeline is of the current evidence format and within its budget;
    each policy left out is listed (hashed) in evidence.json and kept in logs/<set>/left_out.
    Returns the runs whose policies were left out."""
    from sacscale.evidence import scope

    results = workdir / "results" / run_set
    assert scope.format_of(results) >= scope.FORMAT and "evidence.json" in (results / "MANIFEST.sha256").read_text()
    assert scope.set_bytes(results) <= scope.BUDGET_BYTES
    left = json.loads((results / "evidence.json").read_text())["left_out"]
    for entry in left:
        assert not (results / entry["path"]).exists()
        assert (workdir / "logs" / run_set / "left_out" / entry["path"].split("/")[1] / "final.pt").is_file()
    return [entry["path"].split("/")[1] for entry in left]


def check_tampering_is_caught(workdir: Path, run_set: str, run: str, env: dict | None = None) -> None:
    """`snakemake verify` passes, then fails naming a tampered, a deleted and an added file
    (the second verify runs although the first wrote its benchmark file: one per invocation)."""
    ok = snakemake(workdir, "--cores", "1", "verify", env=env)
    assert ok.returncode == 0, ok.stdout[-3000:] + ok.stderr[-3000:]
    results = workdir / "results" / run_set
    log = results / "runs" / run / "train.log"
    data = bytearray(log.read_bytes())
    data[0] ^= 0x01
    log.write_bytes(bytes(data))
    (results / "summary.csv").unlink()
    (results / "runs" / run / "extra.txt").write_text("not evidence")
    bad = snakemake(workdir, "--cores", "1", "verify", env=env)
    out = bad.stdout + bad.stderr
    assert bad.returncode != 0
    assert f"changed: runs/{run}/train.log" in out
    assert "missing: summary.csv" in out
    assert f"extra: runs/{run}/extra.txt" in out
    assert not (results / "summary.csv").exists()  # `verify` rebuilt nothing


def probe_as_wide(presets: dict, name: str) -> dict:
    """The probe of the preset's widest configuration where its own is narrower: planning
    refuses a one-rank probe of two-rank runs (h200x1_learning's controls say to give one)."""
    written = [str(e.get("devices", "")) for e in presets["presets"][name]["run_configs"].values()]
    widest = max(written, key=lambda d: len(d.split(",")))
    probe = str((presets["presets"][name].get("probe") or {}).get("devices", widest))
    return {"probe": {"devices": widest}} if len(probe.split(",")) < len(widest.split(",")) else {}
