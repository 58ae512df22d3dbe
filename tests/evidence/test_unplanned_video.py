"""verify names a video in the report of a set that asked for none: another set's video and
its record planted into such a set, the page written again with it, passed (the choice was
checked against the evaluations, never against whether the set planned a video)."""

import json

import pytest
from set_copies import copy_committed_set, edit_record, remake_manifest

from sacscale.evidence.planned_video import RENDER_SINCE, unplanned_video_findings
from sacscale.evidence.verify import verify

SET = "h200x1_shared_short"
ASKED_NONE = ("a video of the best run, but the set asked for none (environment.json holds no `render` check, which "
              "the pipeline records whenever the set's config turns the video on: video.enabled, or null where runs "
              "train on GPUs)")


def test_the_video_of_a_set_that_asked_for_none_is_named(tmp_path):
    root = copy_committed_set(tmp_path, SET)
    edit_record(root, "environment.json", lambda env: env.pop("render"))
    remake_manifest(root)
    result = verify(root)
    assert result.problems() == [
        f"derived: reports/{SET}: figures/best_run.webp, figures/best_run.json, the video section of report.md and "
        f"report.html: {ASKED_NONE}; run shared_r1_n1_pool7 started at 2026-12-03T22:38:02.198+00:00, after the "
        f"pipeline began to record it ({RENDER_SINCE}): another set's video?"], result.problems()


def _tiny_set(tmp_path, started_at: str, environment: dict):
    root, reports = tmp_path / "results" / "s", tmp_path / "reports" / "s"
    (root / "runs" / "r1").mkdir(parents=True)
    (root / "runs" / "r1" / "run.json").write_text(json.dumps({"started_at": started_at}))
    (root / "environment.json").write_text(json.dumps(environment))
    (reports / "figures").mkdir(parents=True)
    return root, reports


@pytest.mark.parametrize("shown, says", [
    ({"figures/best_run.gif": b"GIF89a"}, "figures/best_run.gif"),
    ({"figures/best_run.json": b"{}"}, "figures/best_run.json"),
    ({"report.md": b"# sacscale run set s\n\n### The best run's policy on video\n\ntext\n"},
     "the video section of report.md"),
    ({"report.html": b"<h3>The best run&#39;s <em>policy</em> on video</h3>"}, "the video section of report.html"),
])
def test_any_part_of_the_video_shown_is_named(tmp_path, shown, says):
    root, reports = _tiny_set(tmp_path, "2026-12-04T00:00:00+00:00", {"recorded_at": "x"})
    for name, data in shown.items():
        (reports / name).write_bytes(data)
    problems, notes = unplanned_video_findings(root, reports, "reports/s")
    assert problems == [f"reports/s: {says}: {ASKED_NONE}; run r1 started at 2026-12-04T00:00:00+00:00, after the "
                        f"pipeline began to record it ({RENDER_SINCE}): another set's video?"] and not notes


def test_a_planned_video_and_an_older_sets_video_are_not_problems(tmp_path):
    root, reports = _tiny_set(tmp_path, "2026-12-04T00:00:00+00:00", {"render": {"ok": True, "backend": "egl"}})
    (reports / "figures" / "best_run.webp").write_bytes(b"RIFF")
    assert unplanned_video_findings(root, reports, "reports/s") == ([], [])
    older, reports = _tiny_set(tmp_path / "older", "2026-12-01T22:00:00+00:00", {})
    (reports / "figures" / "best_run.webp").write_bytes(b"RIFF")
    problems, notes = unplanned_video_findings(older, reports, "reports/s")
    assert not problems and notes == [f"reports/s: figures/best_run.webp: {ASKED_NONE}; the set's runs started "
                                      f"before the pipeline began to record it ({RENDER_SINCE}): an older set, "
                                      "whose video is taken as planned"]


def test_a_set_without_a_video_has_nothing_to_name(tmp_path):
    root, reports = _tiny_set(tmp_path, "2026-12-04T00:00:00+00:00", {})
    (reports / "report.md").write_text("# sacscale run set s\n\nno video\n")
    assert unplanned_video_findings(root, reports, "reports/s") == ([], [])
