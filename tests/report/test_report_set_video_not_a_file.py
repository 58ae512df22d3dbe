"""`report --run-set` refuses anything but a regular file at the set's video or its record
(`reports/S/figures/best_run.webp`, `.json`). A FIFO (or a folder) there was passed over
as no video: exit 0, a page without its video section, no word why. Now one line naming
it, exit 2, nothing written; a set without a video at all still has its report."""

import os
import sys
from pathlib import Path

import pytest

from cli_runs import one_line, sacscale

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "evidence"))
from set_copies import copy_committed_set  # noqa: E402

SET = "h200x1_shared_short"


@pytest.fixture
def figures(tmp_path) -> tuple[Path, Path]:
    """(the set's results folder, its report's figures folder)."""
    root = copy_committed_set(tmp_path, SET)
    return root, root.parents[1] / "reports" / SET / "figures"


@pytest.mark.parametrize(("name", "make", "kind"), [
    ("best_run.webp", os.mkfifo, "a FIFO"),
    ("best_run.json", os.mkfifo, "a FIFO"),
    ("best_run.webp", os.mkdir, "a folder"),
])
def test_not_a_file_at_the_videos_name_is_refused(figures, tmp_path, name, make, kind):
    root, folder = figures
    (folder / name).unlink()
    make(folder / name)
    out = tmp_path / "out"
    one_line(sacscale("report", "--run-set", root, "--output-dir", out),
             f"sacscale report: {folder / name}: {kind}, where the set keeps the best run's video or its record "
             "(render-best writes files; the report would leave the video out)")
    assert not out.exists()


def test_a_set_without_a_video_still_has_its_report(figures, tmp_path):
    root, folder = figures
    for name in ("best_run.webp", "best_run.json"):
        (folder / name).unlink()
    done = sacscale("report", "--run-set", root, "--output-dir", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    assert "best_run" not in (tmp_path / "out" / "report.md").read_text()


@pytest.mark.parametrize(("removed", "kept"), [("best_run.json", "best_run.webp"), ("best_run.webp", "best_run.json")])
def test_a_video_without_its_record_or_a_record_without_its_video_is_named(figures, tmp_path, removed, kept):
    root, folder = figures
    (folder / removed).unlink()
    out = tmp_path / "out"
    done = sacscale("report", "--run-set", root, "--output-dir", out)
    one_line(done, f"sacscale report: {folder / kept}: here without {removed}, which render-best writes beside it")
    assert not out.exists()
