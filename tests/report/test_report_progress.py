"""`sacscale report` says on stderr which stage it is in (loading its libraries, then drawing
and writing, many seconds in all): with --progress, or on a terminal; its stdout, the line
naming what it wrote, stays as it was."""

import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SET = "h200x1_shared_short"


def test_stage_lines_on_stderr_and_stdout_unchanged(tmp_path, sacscale_main):
    shutil.copytree(REPO / "results" / SET, tmp_path / "results" / SET)
    shutil.copytree(REPO / "docs", tmp_path / "docs")
    out = tmp_path / "out"
    proc = sacscale_main("report", "--run-set", f"results/{SET}", "--output-dir", out, "--progress", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"wrote {out}/report.md and {out}/report.html\n"
    runs = len(list((tmp_path / "results" / SET / "metrics").glob("*.json")))
    assert proc.stderr.splitlines() == [
        "sacscale report: loading the report's code (pandas, scipy, matplotlib)",
        f"sacscale report: drawing the figures of {runs} runs and writing the report into {out}"], proc.stderr
    quiet = sacscale_main("report", "--run-set", f"results/{SET}", "--output-dir", tmp_path / "again", cwd=tmp_path)
    assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr  # stderr no terminal: as before
