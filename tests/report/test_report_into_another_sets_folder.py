"""`sacscale report` never replaces another run set's report, nor writes among the sets'
report folders. `report --run-set results/A --output-dir reports/B` replaced B's
(uncommitted) report with A's, exit 0 (B's page titled A, `verify results/B` then 98
problems), and `--output-dir reports` put report.md and figures/ among every set's folders.
Now each is one line, exit 2, nothing written; a report of the same set, a new or empty
folder, or one that merely holds a report under another name (the home folder) still works."""

import shutil
import sys
from pathlib import Path

import pytest

from cli_runs import one_line, sacscale

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "evidence"))
from set_copies import REPO, copy_committed_set  # noqa: E402

SET, OTHER = "h200x1_shared_short", "h200x1_shared_recheck"


@pytest.fixture
def two_sets(tmp_path) -> tuple[Path, Path]:
    """(results/SET, reports/OTHER): two sets side by side, OTHER's report not committed."""
    root = copy_committed_set(tmp_path, SET)
    other = root.parents[1] / "reports" / OTHER
    shutil.copytree(REPO / "reports" / OTHER, other)
    return root, other


def files_of(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_another_sets_report_folder_is_refused(two_sets):
    root, other = two_sets
    before = files_of(other)
    one_line(sacscale("report", "--run-set", root, "--output-dir", other),
             f"sacscale report: {other}: holds the report of another run set, {OTHER} (its report.md's title), "
             f"which this report of {SET} would replace; nothing was written: write it into a folder of its own")
    assert files_of(other) == before
    assert sorted(p.name for p in other.parent.iterdir()) == [OTHER, SET]


def test_another_sets_report_copied_elsewhere_is_refused(two_sets, tmp_path):
    root, other = two_sets
    elsewhere = tmp_path / "mine" / "rep"
    shutil.copytree(other, elsewhere)
    one_line(sacscale("report", "--run-set", root, "--output-dir", elsewhere),
             f"{elsewhere}: holds the report of another run set, {OTHER} (its report.md's title)")
    assert files_of(elsewhere) == files_of(other)


def test_the_folder_of_every_sets_report_is_refused(two_sets):
    root, other = two_sets
    one_line(sacscale("report", "--run-set", root, "--output-dir", other.parent),
             f"sacscale report: --output-dir {other.parent}: the folder of every run set's report (reports/); this "
             f"set's report goes to reports/{SET}/ or a folder of its own")
    assert sorted(p.name for p in other.parent.iterdir()) == [OTHER, SET]


def test_a_folder_holding_other_sets_report_folders_is_refused(two_sets, tmp_path):
    root, other = two_sets
    gathered = tmp_path / "gathered"
    shutil.copytree(other, gathered / OTHER)
    one_line(sacscale("report", "--run-set", root, "--output-dir", gathered),
             f"sacscale report: {gathered}: holds the report folders of other run sets ({OTHER}); a report goes "
             "into a folder of its own, not among them: nothing was written")
    assert sorted(p.name for p in gathered.iterdir()) == [OTHER]


def test_the_same_sets_report_and_a_folder_like_home_are_written(two_sets, tmp_path):
    root, other = two_sets
    done = sacscale("report", "--run-set", root)  # in place: reports/SET holds SET's report
    assert done.returncode == 0, done.stderr
    home = tmp_path / "home"
    shutil.copytree(other, home / "rep22")  # a report kept under a name of the user's own
    done = sacscale("report", "--run-set", root, "--output-dir", home)
    assert done.returncode == 0, done.stderr
    assert (home / "report.md").read_text().startswith(f"# sacscale run set {SET}\n")


@pytest.mark.parametrize("inside", ["sub", "figures", "figures/new/deeper"])
def test_a_folder_inside_another_sets_report_folder_is_refused(two_sets, inside):
    """Before: accepted (exit 0), the report's pages, figures and video left inside the other
    set's report folder, which then failed its verification only by size."""
    root, other = two_sets
    before = files_of(other)
    folder = other / inside
    one_line(sacscale("report", "--run-set", root, "--output-dir", folder),
             f"sacscale report: {folder}: lies inside {other}, which holds the report of another run set, {OTHER} "
             "(its report.md's title); nothing was written: write it into a folder of its own, outside that set's "
             "report")
    assert files_of(other) == before
    assert sorted(p.relative_to(other).as_posix() for p in other.rglob("*") if p.is_dir()) == ["figures"]


def test_a_folder_whose_figures_hold_another_sets_report_is_refused(two_sets, tmp_path):
    """A report of OTHER written into rq/figures/inner, then this set's report into rq: its
    figures folder held another set's whole report. (The other order was refused.)"""
    root, other = two_sets
    folder = tmp_path / "rq"
    shutil.copytree(other, folder / "figures" / "inner")
    one_line(sacscale("report", "--run-set", root, "--output-dir", folder),
             f"sacscale report: {folder}: holds the report of another run set below it, {OTHER} in "
             f"{folder / 'figures' / 'inner'}; this report's pages and figures would hold that one: nothing was "
             "written: write it into a folder of its own")
    assert sorted(p.name for p in folder.iterdir()) == ["figures"]
