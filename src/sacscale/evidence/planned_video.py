"""Whether the set asked for the video its report shows.

The plan does not hold the config's `video`; the set's record of it is environment.json's
`render`: the pipeline's environment rule runs `verify-env --require-render`, which records
it, exactly when the set's config turns the video on (video.enabled, or null where the runs
train on GPUs; workflow/rules/common.smk: video_outputs). A report folder that holds the best
run's video, its record or the pages' video section, in a set whose environment recorded no
render check, shows a video nobody planned: another set's, put there with its caption. The
pipeline has recorded the check since RENDER_SINCE; a set whose runs all started before
then may have made its video without it, and gets a note.

Whose policy the video shows: render-best records the SHA-256 of the checkpoint it rendered
(since CHECKPOINT_SINCE), which must be the one the chosen run's evaluation evaluated.
"""

from __future__ import annotations

from pathlib import Path

from sacscale.evidence.best_video import RECORD, VIDEO_NAMES
from sacscale.evidence.result import EvidenceStructureError, load_json, read_text
from sacscale.reading import loads_record
from sacscale.evidence.scope import started_since
from sacscale.report.build import VIDEO_TITLE
from sacscale.report.shown import long_paragraph, shown_page

# the commit from which the environment rule passes --require-render when the video is on
RENDER_SINCE = "2026-12-02T00:20:32+00:00"
# from when render-best records the checkpoint it rendered; an older set's record names none
CHECKPOINT_SINCE = "2026-12-06T10:40:00+00:00"
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
    """Whether environment.json records the render check passed, in the form verify-env
    --require-render writes it ({"ok": true, "backend": NAME}: any other `render` is no check
    that passed, and a failed one stopped the pipeline before the video); None where it cannot
    be read (named by the record checks)."""
    try:
        render = load_json(root, "environment.json").get("render")
    except (EvidenceStructureError, AttributeError):
        return None
    return isinstance(render, dict) and render.keys() == {"ok", "backend"} and render["ok"] is True \
        and isinstance(render["backend"], str)


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


def _stored_choice(reports: Path, where: str) -> dict | None:
    try:
        stored = loads_record(read_text(reports / RECORD, where))
    except (EvidenceStructureError, ValueError):
        return None  # named by best_video_problems
    return stored if isinstance(stored, dict) and isinstance(stored.get("run"), str) else None


def rendered_checkpoint_findings(root: Path, reports: Path, rel: str) -> tuple[list[str], list[str]]:
    """(problems, notes): the checkpoint the video was rendered from (best_run.json
    checkpoint_sha256) against the one the chosen run's evaluation evaluated: without it
    another policy's video, another set's, passed with a choice made from this set's
    evaluations."""
    where = f"{rel}/{RECORD.as_posix()}"
    stored = _stored_choice(reports, where) if (reports / RECORD).is_file() else None
    if stored is None:
        return [], []
    run = stored["run"]
    try:
        evaluated = load_json(root, f"eval/{run}.json").get("checkpoint_sha256")
    except (EvidenceStructureError, AttributeError):
        return [], []  # no such evaluation, or not a record: named by the choice's and the records' checks
    rendered = stored.get("checkpoint_sha256")
    if rendered is None:
        late = started_since(root, CHECKPOINT_SINCE)
        line = (f"{where}: names no checkpoint_sha256 (the checkpoint render-best rendered), so no policy binds its "
                "video")
        if late:
            return [f"{line}; run {late[0]} started at {late[1]}, after render-best began to record it "
                    f"({CHECKPOINT_SINCE}): another policy's video?: does not match the evidence"], []
        return [], [f"{line}: an older set's record (render-best records it since {CHECKPOINT_SINCE})"]
    if rendered != evaluated:
        return [f"{where}: checkpoint_sha256 {str(rendered)[:64]}, but eval/{run}.json evaluated the checkpoint "
                f"{str(evaluated)[:64]}: the video shows another policy than the run's: does not match the "
                "evidence"], []
    return [], []
