"""A key of free text added to the report's records (figures/best_run.json, which a
repository browser shows, or numbers.json) passed: only the keys their writers write were
compared. A key the writer does not write is named."""

import json

from set_copies import report_file

from sacscale.evidence.verify import verify


def _with_key(path, key, value):
    record = json.loads(path.read_text())
    path.write_text(json.dumps({**record, key: value}, indent=1))


def test_a_key_render_best_does_not_write_is_named(work):
    _with_key(report_file(work, "figures/best_run.json"), "audit", "independently audited by ACME Labs: PASS")
    assert (f"derived: reports/{work.name}/figures/best_run.json: 'audit': not a field render-best writes (run, "
            "score, tracking_lin, tracking_yaw, fall_rate, env_steps, scores, rule, video, seconds, commands, width, "
            "height, fps, checkpoint_sha256), so nothing checks what it says: does not match the "
            "evidence") in verify(work).problems()


def test_a_key_the_report_stage_does_not_write_is_named(work):
    _with_key(report_file(work, "numbers.json"), "audit", "independently audited: PASS")
    assert (f"derived: reports/{work.name}/numbers.json: 'audit': not a field the report stage writes (format, "
            "tables), so nothing checks what it says: does not match the evidence") in verify(work).problems()
