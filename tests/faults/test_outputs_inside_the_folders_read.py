"""An output inside a folder the command reads is refused, one line, nothing written, as
`analyze-run` and `compare-learning` refuse one in their run folders:
`evaluate S/runs/R --output S/runs/R/run.json` replaced the run's record,
`render-best --record S/runs/R/train_meta.json` a run's train_meta, and
`report --output-md S/metrics/report.md ...` left `verify S` with 10 problems (extra files)."""

import shutil
from pathlib import Path

import pytest

from one_line_cli import run

REPO = Path(__file__).resolve().parents[2]
RUN = "shared_r1_n1_pool7"


@pytest.fixture
def run_set(tmp_path):
    """A copy of a committed set (its manifest, runs with a checkpoint, evaluations) without its
    plan: with both, the copy is a finished set wherever it lies, refused by that rule before each
    command's own check of the folders it reads, which these tests hold."""
    root = tmp_path / "S"
    shutil.copytree(REPO / "results" / "h200x1_shared_short", root)
    (root / "plan.json").unlink()
    return root


def files(root):
    return {p: p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("checkpoint, option, output", [
    (f"runs/{RUN}", "--output", f"runs/{RUN}/run.json"),
    (f"runs/{RUN}", "--figure", f"runs/{RUN}/tracking.png"),
    (f"runs/{RUN}/checkpoints/final.pt", "--output", f"runs/{RUN}/eval.json"),
])
def test_evaluate_writes_nothing_into_the_run_it_evaluates(capsys, run_set, tmp_path, checkpoint, option, output):
    before = files(run_set)
    other = ["--output", tmp_path / "e.json"] if option == "--figure" else []
    code, err = run(capsys, "evaluate", run_set / checkpoint, option, run_set / output, *other,
                    "--envs-per-command", "1", "--seconds", "2")
    assert code == 2
    assert err == (f"sacscale evaluate: error: {option} {run_set / output}: inside {run_set / 'runs' / RUN}, "
                   "whose files this command reads as evidence; write it elsewhere")
    assert files(run_set) == before


def _render_best(capsys, root, output, record, evaluations=None):
    evaluations = evaluations or sorted((root / "eval").glob("*.json"))
    return run(capsys, "render-best", "--evaluations", *evaluations, "--runs-dir", root / "runs",
               "--model", root / "model" / "g1_walk_flat.mjb", "--output", output, "--record", record,
               "--fps", "1", "--seconds", "2")


def test_render_best_writes_no_record_over_a_run_s_files(capsys, run_set, tmp_path):
    before = files(run_set)
    record = run_set / "runs" / "shared_r1_n2_shared" / "train_meta.json"
    code, err = _render_best(capsys, run_set, tmp_path / "out" / "b.webp", record)
    assert code == 2
    assert err == (f"sacscale render-best: error: --record {record}: inside {run_set / 'runs'}, whose files this "
                   "command reads as evidence; write it elsewhere")
    assert files(run_set) == before and not (tmp_path / "out").exists()


def test_render_best_writes_nothing_among_the_evaluations(capsys, run_set, tmp_path):
    before = files(run_set)
    evaluations = sorted((run_set / "eval").glob("*.json"))
    code, err = _render_best(capsys, run_set, tmp_path / "b.webp", run_set / "eval" / "best.json")
    assert code == 2
    assert err == (f"sacscale render-best: error: --record {run_set / 'eval' / 'best.json'}: beside the evaluation "
                   f"{evaluations[0]}, in the folder this command reads evaluations from; write it elsewhere")
    assert files(run_set) == before


def test_render_best_writes_nothing_into_the_run_set_it_reads(capsys, run_set, tmp_path):
    before = files(run_set)
    video = run_set / "videos" / "b.webp"
    code, err = _render_best(capsys, run_set, video, tmp_path / "b.json")
    assert code == 2
    assert err == (f"sacscale render-best: error: --output {video}: inside the run set {run_set} (it holds "
                   "MANIFEST.sha256), whose evidence this command reads; a file added there fails its "
                   "verification: write it outside the set")
    assert files(run_set) == before


def _report(capsys, root, md, html, figures):
    return run(capsys, "report", "--summary", root / "summary.json", "--metrics", *sorted((root / "metrics").glob("*")),
               "--environment", root / "environment.json", "--output-md", md, "--output-html", html,
               "--figures-dir", figures)


def test_report_writes_nothing_into_the_run_set_it_reads(capsys, run_set):
    before = files(run_set)
    metrics = run_set / "metrics"
    code, err = _report(capsys, run_set, metrics / "report.md", metrics / "report.html", metrics / "figs")
    assert code == 2
    assert err == (f"sacscale report: error: --output-md {metrics / 'report.md'}: inside the run set {run_set} "
                   "(it holds MANIFEST.sha256), whose evidence this command reads; a file added there fails its "
                   "verification: write it outside the set")
    assert files(run_set) == before and not (metrics / "figs").exists()


def test_a_set_being_made_is_known_by_its_plan(capsys, run_set):
    """Before the manifest is made, the plan the pipeline wrote first marks the set."""
    (run_set / "MANIFEST.sha256").unlink()
    shutil.copyfile(REPO / "results" / "h200x1_shared_short" / "plan.json", run_set / "plan.json")
    code, err = _report(capsys, run_set, run_set / "r" / "report.md", run_set / "r" / "report.html",
                        run_set / "r" / "figures")
    assert code == 2 and f"inside the run set {run_set} (it holds plan.json)" in err, err
    assert not (run_set / "r").exists()


def test_a_report_beside_the_set_is_written(capsys, run_set, tmp_path):
    out = tmp_path / "report"
    code, err = _report(capsys, run_set, out / "report.md", out / "report.html", out / "figures")
    assert code == 0, err
    assert (out / "report.md").is_file() and (out / "figures").is_dir()
