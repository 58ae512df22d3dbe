"""A missing input in a folder that never existed. Before: `report ... --metrics
/never/m.json` said `its folder /never was removed while the command ran`, a race that did
not happen (the line for a folder removed mid-run); now the folder is said to be missing."""

from cli_runs import REPO, SET, one_line, sacscale


def test_a_missing_folder_is_said_missing(tmp_path):
    out = tmp_path / "r"
    missing = tmp_path / "never" / "m.json"
    done = sacscale("report", "--summary", REPO / "results" / SET / "summary.json", "--output-md", out / "r.md",
                    "--output-html", out / "r.html", "--figures-dir", out / "figures", "--metrics", missing)
    one_line(done, f"sacscale report: error: {missing}: no such file or directory (its folder {missing.parent} does "
                   "not exist)")
    assert "removed" not in done.stderr
