"""The committed report of every run set made under the 4 MB budget, opened as a reader
opens it: its figures and its video are files linked from figures/ and every one loads."""

from pathlib import Path

import pytest

from report_browser import inspect_page
from sacscale.evidence.scope import format_of
from test_report_browser import browser, problems  # noqa: F401  (the fixture that finds the browser)

REPO = Path(__file__).resolve().parents[2]
BUDGET_SETS = sorted(p.name for p in (REPO / "results").iterdir() if p.is_dir() and format_of(p) >= 2)


def test_a_budget_set_is_committed():
    assert BUDGET_SETS, "no run set of the budget's format under results/"


@pytest.mark.parametrize("run_set", BUDGET_SETS)
def test_budget_set_report_shows_its_figures_and_video(browser, tmp_path, run_set):  # noqa: F811
    html = REPO / "reports" / run_set / "report.html"
    media = sorted(f.name for f in (html.parent / "figures").iterdir() if f.suffix in {".png", ".webp", ".gif"})
    assert any(name.endswith((".webp", ".gif")) for name in media), f"{run_set}: no video in figures/"
    page = inspect_page(html, tmp_path / "profile", browser)
    assert problems(page, min_images=len(media)) == []
    assert len(page.images) == len(media)  # each figure and the video shown once, none missing
