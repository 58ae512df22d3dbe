"""`sacscale report`'s `wrote ...` line is one line: an output folder whose name holds a
line break is printed with it escaped, not split into lines of its own."""

import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SET = "h200x1_final"


def test_a_line_break_in_the_output_folder_is_printed_escaped(tmp_path, sacscale_main):
    shutil.copytree(REPO / "results" / SET, tmp_path / "results" / SET)
    shutil.copytree(REPO / "docs", tmp_path / "docs")
    out = tmp_path / "own" / "n\nx\ry"
    out.parent.mkdir()
    proc = sacscale_main("report", "--run-set", f"results/{SET}", "--output-dir", str(out), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    shown = f"{tmp_path}/own/n\\nx\\ry"
    assert proc.stdout.splitlines() == [f"wrote {shown}/report.md and {shown}/report.html"], proc.stdout
    assert (out / "report.md").is_file()
