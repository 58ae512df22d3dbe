"""`report --run-dirs FILE` (or `--attempts-dir FILE`) read the file as a run folder and
ended in `EventFileError: FILE/tb: the run has no TensorBoard directory`, exit 1: a file
given for a folder is named as such, exit 2, nothing written."""

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SET = REPO / "results" / "h200x1_final5"


@pytest.mark.parametrize("option", ["--run-dirs", "--attempts-dir"])
def test_a_file_given_for_a_run_folder_is_named(tmp_path, sacscale_main, option):
    given = tmp_path / "a_file"
    given.write_text("")
    out = tmp_path / "rep"
    done = sacscale_main("report", "--output-md", out / "r.md", "--output-html", out / "r.html", "--figures-dir",
                         out / "figures", "--summary", SET / "summary.json", "--metrics",
                         *sorted((SET / "metrics").glob("*.json")), option, given, "--quiet")
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == (f"sacscale report: {given}: a plain file, not a folder (--run-dirs and "
                                   "--attempts-dir take folders)"), done.stderr
    assert not out.exists()
