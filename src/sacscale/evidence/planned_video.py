"""Whether the set asked for the video its report shows.

The plan does not hold the config's `video`; the set's record of it is environment.json's
`render`: the pipeline's environment rule runs `verify-env --require-render`, which records
it, exactly when the set's config turns the video on (video.enabled, or null where the runs
train on GPUs; workflow/rules/common.smk: video_outputs). A report folder that holds the best
run's video, its record or the pages' video section, in a set whose environment recorded no
render check, shows a video nobody planned: another set's, put there with its caption. The
pipeline has recorded the check since RENDER_SINCE; a set whose runs all started before
then may have made its video without it, and gets a note.
"""

from __future__ import annotations

from pathlib import Path

from sacscale.evidence.best_video import RECORD, VIDEO_NAMES
from sacscale.evidence.result import EvidenceStructureError, load_json, read_text
from sacscale.evidence.scope import started_since
from sacscale.report.build import VIDEO_TITLE
from sacscale.report.shown import long_paragraph, shown_page

# the commit from which the environment rule passes --require-render when the video is on
RENDER_SINCE = "2026-12-02T00:20:32+00:00"
PAGES = (("report.md", False), ("report.html", True))


def _page_shows_video(reports: Path, rel: str, page: str, html: bool) -> bool:
    if not (reports / page).is_file():
        return False
    try:
        text = read_text(reports / page, f"{rel}/{page}", errors="replace")
    except EvidenceStructureError:
        return False  # named by the report's checks
    if not html and long_paragraph(text) is not None:
        return False  # not rendered: named by the report's checks
    return VIDEO_TITLE in shown_page(text, html)[1]


def shown_video(reports: Path, rel: str) -> list[str]:
    """What of the best run's video the report folder holds (paths within it): the video,
    its record (the caption's source), the pages' video section."""
    files = [f"figures/{name}" for name in (*VIDEO_NAMES, RECORD.name) if (reports / "figures" / name).exists()]
    pages = [page for page, html in PAGES if _page_shows_video(reports, rel, page, html)]
    return files + ([f"the video section of {' and '.join(pages)}"] if pages else [])


def _render_recorded(root: Path) -> bool | None:
    """Whether environment.json records the render check; None where it cannot be read
    (named by the record checks)."""
    try:
        return "render" in load_json(root, "environment.json")
    except EvidenceStructureError:
        return None


def unplanned_video_findings(root: Path, reports: Path, rel: str) -> tuple[list[str], list[str]]:
    """(problems, notes): the best run's video in the report of a set that did not ask for one."""
    shown = shown_video(reports, rel)
    if not shown or _render_recorded(root) is not False:
        return [], []
    line = (f"{rel}: {', '.join(shown)}: a video of the best run, but the set asked for none (environment.json "
            "holds no `render` check, which the pipeline records whenever the set's config turns the video on: "
            "video.enabled, or null where runs train on GPUs)")
    late = started_since(root, RENDER_SINCE)
    if late:
        return [f"{line}; run {late[0]} started at {late[1]}, after the pipeline began to record it ({RENDER_SINCE}): "
                "another set's video?"], []
    return [], [f"{line}; the set's runs started before the pipeline began to record it ({RENDER_SINCE}): an older "
                "set, whose video is taken as planned"]
