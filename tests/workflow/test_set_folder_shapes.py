"""Anything but a folder where the pipeline makes one (logs/<set>, benchmarks/<set>, a folder
the rules write logs, benchmarks or outputs into: logs/<set>/train, .../attempts,
results/<set>/model), or a folder at a log, benchmark or output file's name, is refused before
the first job, a dry run too, in one line naming it. A file at logs/<set>/train had Snakemake's
63-line traceback after two jobs ran; one at logs/<set> the plan rule's traceback; one at
benchmarks/<set> a failed plan job; one at results/<set>/model a traceback after two jobs."""

import os
from pathlib import Path

import pytest

from pipeline_helpers import REPO, snakemake
from sacscale.pipeline.plan_values import PlanError
from sacscale.pipeline.set_folders import check_folder_shapes

SET_FOLDERS = ["results/s", "reports/s", "logs/s", "benchmarks/s"]
RULE_FILES = sorted(str(p) for p in (REPO / "workflow" / "rules").glob("*.smk"))
ROOTS = {"LOGS": "logs/s", "BENCH": "benchmarks/s", "RESULTS": "results/s", "REPORTS": "reports/s"}
REFUSED = "stands where the pipeline makes a folder and is not a folder; remove it (or move it away) and run again"


def check(work: Path, monkeypatch) -> None:
    monkeypatch.chdir(work)
    check_folder_shapes(SET_FOLDERS, RULE_FILES, ROOTS, "s")


def plain_file(path: Path) -> None:
    path.write_text("x\n")


def fifo(path: Path) -> None:
    os.mkfifo(path)


def link_to_a_file(path: Path) -> None:
    (path.parent / "elsewhere").write_text("x\n")
    path.symlink_to("elsewhere")


def dangling_link(path: Path) -> None:
    path.symlink_to("nowhere")


@pytest.mark.parametrize("name", ["logs/s", "benchmarks/s", "results/s", "reports/s", "logs/s/train",
                                  "logs/s/analyze_run", "logs/s/evaluate_run", "logs/s/attempts",
                                  "logs/s/learning_state", "logs/s/left_out", "benchmarks/s/train",
                                  "benchmarks/s/verify", "results/s/model", "results/s/metrics", "results/s/eval",
                                  "results/s/runs", "reports/s/figures"])
@pytest.mark.parametrize("make", [plain_file, fifo, link_to_a_file, dangling_link])
def test_anything_but_a_folder_where_one_is_made_is_refused(tmp_path, monkeypatch, name, make):
    (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
    make(tmp_path / name)
    with pytest.raises(PlanError) as refused:
        check(tmp_path, monkeypatch)
    assert str(refused.value) == f"run_set s: {name}: {REFUSED}"


@pytest.mark.parametrize(("name", "kind"), [("logs/s/plan.log", "log"), ("logs/s/train/s_r1.log", "log"),
                                            ("benchmarks/s/plan.tsv", "benchmark"),
                                            ("benchmarks/s/verify/20260101T000000.000000Z.tsv", "benchmark"),
                                            ("results/s/model.json", "result"),
                                            ("results/s/model/g1_walk_flat.mjb", "result"),
                                            ("reports/s/report.md", "report")])
def test_a_folder_at_a_written_file_is_refused(tmp_path, monkeypatch, name, kind):
    (tmp_path / name).mkdir(parents=True)
    with pytest.raises(PlanError, match=f"^run_set s: {name}: a folder stands at a {kind} file's name; "):
        check(tmp_path, monkeypatch)


def test_a_set_resumed_with_its_usual_logs_passes(tmp_path, monkeypatch):
    for folder in ("logs/s/train", "logs/s/attempts/s_r1.failed-20260101T000000Z", "logs/s/learning_state/s_r1",
                   "benchmarks/s/verify", "results/s/runs/s_r1", "results/s/model", "results/s/eval",
                   "reports/s/figures"):
        (tmp_path / folder).mkdir(parents=True)
    for name in ("logs/s/plan.log", "logs/s/train/s_r1.log", "logs/s/attempts/s_r1.failed-20260101T000000Z/x.log",
                 "benchmarks/s/plan.tsv", "benchmarks/s/verify/20260101T000000.000000Z.tsv", "results/s/plan.json",
                 "results/s/model/g1_walk_flat.mjb", "results/s/eval/s_r1.json", "reports/s/report.md",
                 "reports/s/figures/best_run.webp"):
        (tmp_path / name).write_text("x\n")
    check(tmp_path, monkeypatch)


def test_a_fresh_set_passes(tmp_path, monkeypatch):
    check(tmp_path, monkeypatch)


@pytest.mark.parametrize("name", ["logs/cpu", "benchmarks/cpu", "logs/cpu/train"])
def test_a_file_at_a_set_or_log_folder_stops_the_dry_run(workflow_dir, name):
    (workflow_dir / name).parent.mkdir(parents=True, exist_ok=True)
    (workflow_dir / name).write_text("x\n")
    proc = snakemake(workflow_dir, "-n", "--cores", "1")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert f"config error: run_set cpu: {name}: {REFUSED}" in out
    assert "Traceback" not in out and "Job 0" not in out
    assert not (workflow_dir / "reports" / "cpu").exists()  # refused before any set folder is made


def test_a_resumed_set_passes_the_dry_run(workflow_dir):
    for folder in ("logs/cpu/train", "logs/cpu/attempts/cpu_r1_n1_cpu.failed-20260101T000000Z",
                   "benchmarks/cpu/train"):
        (workflow_dir / folder).mkdir(parents=True)
    for name in ("logs/cpu/plan.log", "logs/cpu/train/cpu_r1_n1_cpu.log", "benchmarks/cpu/plan.tsv"):
        (workflow_dir / name).write_text("x\n")
    proc = snakemake(workflow_dir, "-n", "--cores", "1")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


def test_a_file_at_an_output_folder_of_a_planned_set_stops_the_run(workflow_dir):
    planned = snakemake(workflow_dir, "--cores", "1", "--until", "plan")
    assert planned.returncode == 0, planned.stdout[-3000:] + planned.stderr[-3000:]
    (workflow_dir / "results" / "cpu" / "model").write_text("x\n")  # prepare_model makes a folder here
    proc = snakemake(workflow_dir, "-n", "--cores", "1")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert f"config error: run_set cpu: results/cpu/model: {REFUSED}" in out
    assert "Traceback" not in out and "Job 0" not in out


@pytest.mark.parametrize("make", [plain_file, fifo, link_to_a_file, dangling_link])
def test_anything_but_a_folder_at_a_planned_run_s_folder_is_refused(tmp_path, monkeypatch, make):
    (tmp_path / "results/s/runs").mkdir(parents=True)
    make(tmp_path / "results/s/runs/s_r2")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(PlanError) as refused:
        check_folder_shapes(SET_FOLDERS, RULE_FILES, ROOTS, "s", ["s_r1", "s_r2"])
    assert str(refused.value) == f"run_set s: results/s/runs/s_r2: {REFUSED}"


def test_a_folder_at_a_planned_run_s_record_is_refused(tmp_path, monkeypatch):
    (tmp_path / "results/s/runs/s_r1/run.json/x").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(PlanError, match="^run_set s: results/s/runs/s_r1/run.json: a folder stands at a result file's"):
        check_folder_shapes(SET_FOLDERS, RULE_FILES, ROOTS, "s", ["s_r1"])


def test_only_planned_runs_names_are_judged(tmp_path, monkeypatch):
    (tmp_path / "results/s/runs/s_r1").mkdir(parents=True)
    (tmp_path / "results/s/runs/s_r1/run.json").write_text("{}\n")
    (tmp_path / "results/s/runs/notes.txt").write_text("x\n")  # no run of the plan: no rule writes there
    (tmp_path / "results/s/runs/[s]_r1").write_text("x\n")  # a glob of a run's name, not its name
    monkeypatch.chdir(tmp_path)
    check_folder_shapes(SET_FOLDERS, RULE_FILES, ROOTS, "s", ["s_r1", "s_r2"])


def test_a_file_at_a_planned_run_s_folder_stops_the_dry_run(workflow_dir):
    (workflow_dir / "results/cpu/runs").mkdir(parents=True)
    (workflow_dir / "results/cpu/runs/cpu_r1_n1_cpu").write_text("hello\n")  # the run's folder, made by record-run
    proc = snakemake(workflow_dir, "-n", "--cores", "1")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert f"config error: run_set cpu: results/cpu/runs/cpu_r1_n1_cpu: {REFUSED}" in out
    assert "Traceback" not in out and "Job 0" not in out
