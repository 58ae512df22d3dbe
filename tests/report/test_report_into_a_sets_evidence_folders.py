"""Where a finished set's report may not go. `report --run-set S --output-dir results` put
report.md and figures/ among every set's evidence folders, exit 0, where `--output-dir
reports` was refused; a report written inside the set's own reports/S/figures/ (by
`--output-dir`, or a page by `--output-md`) was not looked at, exit 0. Now each is one
line naming the option and the folder, exit 2, nothing written."""

import sys
from pathlib import Path

import pytest

from cli_runs import one_line, sacscale

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "evidence"))
from set_copies import copy_committed_set  # noqa: E402

SET = "h200x1_shared_short"


@pytest.fixture
def root(tmp_path) -> Path:
    return copy_committed_set(tmp_path, SET)


def test_the_folder_of_every_sets_evidence_is_refused(root):
    results = root.parent
    one_line(sacscale("report", "--run-set", root, "--output-dir", results),
             f"sacscale report: --output-dir {results}: the folder of every run set's evidence (results/); this "
             f"set's report goes to reports/{SET}/ or a folder of its own")
    assert sorted(p.name for p in results.iterdir()) == [SET]


def test_the_sets_own_figures_folder_is_refused(root):
    figures = root.parents[1] / "reports" / SET / "figures"
    before = sorted(p.name for p in figures.iterdir())
    one_line(sacscale("report", "--run-set", root, "--output-dir", figures),
             f"sacscale report: error: argument --output-dir: {figures} is inside reports/{SET}, a finished run set "
             f"(it has results/{SET}/MANIFEST.sha256), whose evidence is not rewritten or added to; write it "
             "elsewhere")
    assert sorted(p.name for p in figures.iterdir()) == before


def test_a_page_named_in_the_sets_figures_folder_is_refused(root, tmp_path):
    reports = root.parents[1] / "reports" / SET
    page = reports / "figures" / "report.md"
    done = sacscale("report", "--summary", root / "summary.json", "--metrics", *sorted((root / "metrics").glob("*")),
                    "--output-md", page, "--output-html", reports / "figures" / "report.html",
                    "--figures-dir", reports / "figures" / "figures")
    one_line(done, f"argument --output-md: {page} is inside reports/{SET}, a finished run set")
    assert not page.exists()
