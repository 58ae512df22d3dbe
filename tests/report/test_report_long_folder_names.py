"""A report's folder with a legal name near the bound (238 to 255 bytes). Before: its staging
folder beside it, `.<name>.report-XXXXXXXX`, was 17 bytes longer than a name can be: the
report failed after its checks with `File name too long` naming that hidden folder. Now the
staging folder's name has the folder's name cut, a digest of it keeping it apart, so every
legal name is written, in each form that names the report's folder."""

from pathlib import Path

import pytest
from cli_runs import REPO, SET, sacscale

from sacscale.long_names import NAME_BYTES, size
from sacscale.pipeline.held_locks import _doing, report_staging_prefix

METRICS = REPO / "results" / SET / "metrics" / "shared_r1_n1_pool7.json"


def _left_beside(out: Path) -> list[str]:
    return sorted(p.name for p in out.parent.iterdir())


@pytest.mark.parametrize("length", [240, 255])
def test_a_report_folder_named_near_the_bound_is_written(tmp_path, length):
    out = tmp_path / ("r" * length)
    done = sacscale("report", "--run-set", REPO / "results" / SET, "--output-dir", out)
    assert done.returncode == 0, done.stderr
    assert (out / "report.md").is_file() and (out / "report.html").is_file()
    assert _left_beside(out) == [out.name]  # no staging folder or lock left


def test_the_pipelines_form_into_a_folder_named_near_the_bound_is_written(tmp_path):
    out = tmp_path / ("p" * 250)
    done = sacscale("report", "--summary", REPO / "results" / SET / "summary.json", "--metrics", METRICS,
                    "--output-md", out / "report.md", "--output-html", out / "report.html",
                    "--figures-dir", out / "figures")
    assert done.returncode == 0, done.stderr
    assert (out / "figures" / "throughput_by_repeat.png").is_file() and (out / "report.html").is_file()
    assert _left_beside(out) == [out.name]


def test_a_staging_name_fits_and_keeps_long_names_apart(tmp_path):
    """Each name a report's folder can have (reports/<set> too) gives a staging folder's name that
    fits, two long names of one start two staging names; a short one's is as before."""
    assert report_staging_prefix(tmp_path / "rep") == ".rep.report-"
    prefixes = {report_staging_prefix(tmp_path / ("s" * n + tail)) for n in (237, 250, 254) for tail in "ab"}
    assert len(prefixes) == 6
    assert all(size(p) + 8 <= NAME_BYTES for p in prefixes)
    wide = report_staging_prefix(tmp_path / ("é" * 127))  # 254 bytes, cut between characters, never inside one
    assert size(wide) + 8 <= NAME_BYTES and wide.encode()


def test_a_live_cut_staging_folder_is_said_by_its_folders_start(tmp_path):
    staging = report_staging_prefix(tmp_path / ("s" * 250)) + "abcdefgh"
    start = staging[1:staging.index(".cut-")]
    assert set(start) == {"s"} and len(start) > 200
    said = _doing(tmp_path, staging, ".lock")
    assert said == f"a sacscale report into a folder of {tmp_path} named {start}... is being written"
