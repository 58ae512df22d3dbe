"""The committed report of every run set made under the 4 MB budget, opened as a reader
opens it: its figures and its video are files linked from figures/ and every one loads.
A set made with the video off has none; at least one committed set has one."""

from pathlib import Path

import pytest

from report_browser import inspect_page
from sacscale.evidence.scope import format_of
from test_report_browser import browser, problems  # noqa: F401  (the fixture that finds the browser)

REPO = Path(__file__).resolve().parents[2]
BUDGET_SETS = sorted(p.name for p in (REPO / "results").iterdir() if p.is_dir() and format_of(p) >= 2)


def media_of(run_set: str) -> list[str]:
    figures = REPO / "reports" / run_set / "figures"
    return sorted(f.name for f in figures.iterdir() if f.suffix in {".png", ".webp", ".gif"})


# A figure the report stage writes without data (the workflow declares the file) is not
# shown: the report says so in this sentence instead.
NOT_SHOWN = {"phase_times.png": "No per-phase figure", "return_vs_time.png": "No episode-return figure",
             "learning_curves.png": "No learning curves"}


def shown_media(run_set: str) -> list[str]:
    text = (REPO / "reports" / run_set / "report.md").read_text(encoding="utf-8")
    return [name for name in media_of(run_set) if NOT_SHOWN.get(name, "\0") not in text]


def is_video(name: str) -> bool:
    return name.endswith((".webp", ".gif"))


def test_a_budget_set_with_a_video_is_committed():
    assert any(is_video(name) for run_set in BUDGET_SETS for name in media_of(run_set)), \
        "no run set of the budget's format under results/ has a video"


@pytest.mark.parametrize("run_set", BUDGET_SETS)
def test_budget_set_report_shows_its_figures_and_video(browser, tmp_path, run_set):  # noqa: F811
    html = REPO / "reports" / run_set / "report.html"
    media = shown_media(run_set)
    shows_video = "on video</h3>" in html.read_text(encoding="utf-8")
    assert shows_video == any(is_video(name) for name in media), f"{run_set}: video heading and figures/ disagree"
    page = inspect_page(html, tmp_path / "profile", browser)
    assert problems(page, min_images=len(media)) == []
    assert len(page.images) == len(media)  # each figure and the video shown once, none missing
