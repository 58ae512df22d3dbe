"""verify binds the report's video to the policy it shows: another set's video planted in a set
that asked for none, with a `render` record of verify-env's shape added to environment.json and
best_run.json made from this set's evaluations, passed (any `render` key was taken as the
check, and the record named no checkpoint). Now render-best records the SHA-256 of the
checkpoint it rendered, which must be the one the chosen run's evaluation evaluated, and only
the record verify-env writes of a passed render check counts as one."""

import json

import pytest

from sacscale.evidence.planned_video import CHECKPOINT_SINCE, rendered_checkpoint_findings, unplanned_video_findings

EVALUATED, OTHER = "6" * 64, "a" * 64
RECORD = "reports/s/figures/best_run.json"


def _set(tmp_path, started_at: str, choice: dict, environment: dict | None = None):
    root, reports = tmp_path / "results" / "s", tmp_path / "reports" / "s"
    (root / "runs" / "r1").mkdir(parents=True)
    (root / "runs" / "r1" / "run.json").write_text(json.dumps({"started_at": started_at}))
    (root / "eval").mkdir()
    (root / "eval" / "r1.json").write_text(json.dumps({"checkpoint_sha256": EVALUATED}))
    (root / "environment.json").write_text(json.dumps(environment or {}))
    (reports / "figures").mkdir(parents=True)
    (reports / "figures" / "best_run.json").write_text(json.dumps({"run": "r1", **choice}))
    (reports / "figures" / "best_run.webp").write_bytes(b"RIFF")
    return root, reports


def test_a_video_of_another_checkpoint_is_named(tmp_path):
    root, reports = _set(tmp_path, "2026-12-07T00:00:00+00:00", {"checkpoint_sha256": OTHER})
    assert rendered_checkpoint_findings(root, reports, "reports/s") == (
        [f"{RECORD}: checkpoint_sha256 {OTHER}, but eval/r1.json evaluated the checkpoint {EVALUATED}: the video "
         "shows another policy than the run's: does not match the evidence"], [])


def test_a_new_sets_record_naming_no_checkpoint_is_named_an_older_sets_noted(tmp_path):
    root, reports = _set(tmp_path, "2026-12-07T00:00:00+00:00", {})
    line = f"{RECORD}: names no checkpoint_sha256 (the checkpoint render-best rendered), so no policy binds its video"
    assert rendered_checkpoint_findings(root, reports, "reports/s") == (
        [f"{line}; run r1 started at 2026-12-07T00:00:00+00:00, after render-best began to record it "
         f"({CHECKPOINT_SINCE}): another policy's video?: does not match the evidence"], [])
    older, reports = _set(tmp_path / "older", "2026-12-03T00:00:00+00:00", {})
    assert rendered_checkpoint_findings(older, reports, "reports/s") == (
        [], [f"{line}: an older set's record (render-best records it since {CHECKPOINT_SINCE})"])


def test_the_video_of_the_evaluated_checkpoint_passes(tmp_path):
    root, reports = _set(tmp_path, "2026-12-07T00:00:00+00:00", {"checkpoint_sha256": EVALUATED})
    assert rendered_checkpoint_findings(root, reports, "reports/s") == ([], [])


@pytest.mark.parametrize("render", [{}, {"ok": True}, {"ok": "yes", "backend": "egl"}, {"ok": False, "error": "x"},
                                    {"ok": True, "backend": "egl", "note": "planted"}, "egl", None])
def test_only_a_passed_render_check_as_verify_env_writes_it_plans_the_video(tmp_path, render):
    root, reports = _set(tmp_path, "2026-12-07T00:00:00+00:00", {"checkpoint_sha256": EVALUATED},
                         {"render": render})
    problems, _ = unplanned_video_findings(root, reports, "reports/s")
    assert len(problems) == 1 and "the set asked for none" in problems[0], problems
    planned, reports = _set(tmp_path / "planned", "2026-12-07T00:00:00+00:00", {"checkpoint_sha256": EVALUATED},
                            {"render": {"ok": True, "backend": "egl"}})
    assert unplanned_video_findings(planned, reports, "reports/s") == ([], [])
