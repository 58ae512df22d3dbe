"""`sacscale report --run-set results/S` rebuilds only the report of a finished set, from
its own files: the evidence is not written, and the rebuilt report verifies. A committed
report is not rewritten; every refusal is one line that names what to run instead."""

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SET = "h200x1_final"  # a committed set made with the current summary (intervals, windows)


@pytest.fixture
def sacscale(sacscale_main):
    return lambda *args, cwd=REPO: sacscale_main(*args, cwd=cwd)


def hashes(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def assert_one_line_refusal(proc: subprocess.CompletedProcess, *says: str) -> None:
    assert proc.returncode == 2 and proc.stdout == "", proc.stdout + proc.stderr
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr
    for text in says:
        assert text in proc.stderr, proc.stderr


def test_the_report_of_a_finished_set_is_rebuilt_without_touching_its_evidence(tmp_path, sacscale):
    shutil.copytree(REPO / "results" / SET, tmp_path / "results" / SET)
    shutil.copytree(REPO / "docs", tmp_path / "docs")
    results = tmp_path / "results" / SET
    before = hashes(results)
    proc = sacscale("report", "--run-set", f"results/{SET}", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert hashes(results) == before  # nothing under results/ written
    report = tmp_path / "reports" / SET
    assert (report / "report.md").read_text().startswith(f"# sacscale run set {SET}\n\n**At a glance:**")
    assert (report / "figures" / "scaling_bars.png").is_file()
    assert '<a href="../../docs/deviations.md">' in (report / "report.html").read_text()
    checked = sacscale("verify", f"results/{SET}", cwd=tmp_path)
    assert checked.returncode == 0 and f"reports/{SET}/report.md" in checked.stdout, checked.stdout + checked.stderr


@pytest.mark.skipif(subprocess.run(["git", "-C", str(REPO), "ls-files", "--error-unmatch", f"reports/{SET}/report.md"],
                                    capture_output=True).returncode != 0,
                    reason="not a git checkout with the committed set: nothing is committed to protect")
def test_a_committed_report_is_not_rewritten_and_the_refusal_names_the_command(sacscale):
    report = REPO / "reports" / SET / "report.md"
    stamp = report.stat().st_mtime_ns
    proc = sacscale("report", "--run-set", f"results/{SET}")
    assert_one_line_refusal(proc, "committed report", f"sacscale report --run-set results/{SET} --output-dir ")
    assert report.stat().st_mtime_ns == stamp


def test_an_unfinished_set_or_a_wrong_directory_is_refused_in_one_line(tmp_path, sacscale):
    (tmp_path / "results" / "half").mkdir(parents=True)
    (tmp_path / "results" / "half" / "plan.json").write_text("{}")
    assert_one_line_refusal(sacscale("report", "--run-set", "results/half", cwd=tmp_path),
                            "not a finished run set (no summary.json", "snakemake --cores all --config run_set=half")
    assert_one_line_refusal(sacscale("report", "--run-set", str(tmp_path)), "not a run set's directory")
    assert_one_line_refusal(sacscale("report", "--summary", "s.json"), "--run-set results/<set>", "--metrics")
    (tmp_path / "results" / "l1").symlink_to("l2")
    (tmp_path / "results" / "l2").symlink_to("l1")
    assert_one_line_refusal(sacscale("report", "--run-set", "results/l1", cwd=tmp_path), "l1")
    assert not (tmp_path / "reports").exists()
