"""A checkout whose results/ and reports/ are links to sibling folders on another disk
(the layout planning tells users to make): the report links the deviations document by
the path a reader of the checkout follows (reports/<set>/ to docs/), and verify composes
the same link, so the set verifies."""

import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SET = "h200x1_final"  # a committed set made with the current summary


def test_a_set_under_linked_results_and_reports_verifies_with_its_deviations_link(tmp_path, sacscale_main):
    checkout, disk = tmp_path / "wt", tmp_path / "disk" / "store"  # the disk deeper: real paths give another link
    shutil.copytree(REPO / "results" / SET, disk / "results" / SET)
    (disk / "reports").mkdir()
    shutil.copytree(REPO / "docs", checkout / "docs")
    (checkout / "results").symlink_to(disk / "results")
    (checkout / "reports").symlink_to(disk / "reports")
    made = sacscale_main("report", "--run-set", f"results/{SET}", cwd=checkout)
    assert made.returncode == 0, made.stderr
    page = (disk / "reports" / SET / "report.html").read_text()
    assert '<a href="../../docs/deviations.md">' in page  # from wt/reports/<set>/ to wt/docs/
    checked = sacscale_main("verify", f"results/{SET}", cwd=checkout)
    assert checked.returncode == 0, checked.stdout + checked.stderr
