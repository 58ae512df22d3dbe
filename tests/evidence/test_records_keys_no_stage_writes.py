"""A key the probe never writes added to correctness.json ("summary": "Two GPUs give a 9.9x
speed-up"), or one prepare-model never writes added to model.json, with the manifest and the
report made again: verify passed and the page showed the sentence, since the report listed
every key of these records. verify now names such a key in a set of the current evidence
format, and the page shows the fields their writers write only. An older set's pipeline/
folder (the device's logs and records), hashed but read by nothing, is named in the notes."""

import json

from set_copies import copy_committed_set, edit_record, remake_manifest, report_file

from sacscale.evidence.verify import verify
from sacscale.report.build import write_report
from sacscale.report.set_inputs import set_inputs

CLAIM = "Two GPUs give a 9.9x speed-up over one"


def _forged(root, rel: str, edit):
    """The record edited, its manifest and report made again with the project's own code."""
    edit_record(root, rel, edit)
    remake_manifest(root)
    reports = report_file(root, "")
    write_report(output_md=reports / "report.md", output_html=reports / "report.html",
                 figures_dir=reports / "figures", **set_inputs(root, reports))
    return verify(root)


def _page(root) -> str:
    return report_file(root, "report.md").read_text() + report_file(root, "report.html").read_text()


def test_a_key_the_probe_never_writes_is_named_and_not_shown(work):
    result = _forged(work, "correctness.json", lambda r: r.update(summary=CLAIM))
    assert not result.ok
    assert ("correctness.json: 'summary': not a field the probe (sacscale.parallel.probe_settings."
            "PROBE_RECORD_FIELDS) writes, so nothing checks what it says") in result.records
    assert CLAIM not in _page(work)


def test_a_column_the_probe_never_writes_is_named_and_not_shown(work):
    def edit(record):
        record["comparisons"][0]["speed_up"] = CLAIM

    result = _forged(work, "correctness.json", edit)
    tensor = json.loads((work / "correctness.json").read_text())["comparisons"][0]["tensor"]
    assert not result.ok
    assert (f"correctness.json: comparison 1 ({tensor}): column 'speed_up': not one the probe writes "
            "(sacscale.parallel.probe_settings.COMPARISON_FIELDS), so nothing checks what it says") in result.records
    assert CLAIM not in _page(work) and "speed_up" not in _page(work)


def test_a_key_in_the_trainer_path_record_is_named(work):
    result = _forged(work, "correctness.json", lambda r: r["trainer_path"].update(note=CLAIM))
    assert ("correctness.json: trainer_path: 'note': not a field the trainer-path probe (sacscale.train."
            "probe_settings.TRAINER_RECORD_FIELDS) writes, so nothing checks what it says") in result.records


def test_a_key_prepare_model_never_writes_is_named_and_not_shown(work):
    result = _forged(work, "model.json", lambda r: r.update(note=CLAIM))
    assert not result.ok
    assert ("model.json: 'note': not a field prepare-model (file, sha256, bytes, source, summary, physics_cost, "
            "mujoco_version) writes, so nothing checks what it says") in result.records
    assert CLAIM not in _page(work)


def test_a_variable_verify_env_never_records_is_named_and_not_shown(work):
    result = _forged(work, "environment.json", lambda r: r["env"].update(SPEED_UP="9.9x"))
    assert ("environment.json: env 'SPEED_UP': not a variable verify-env records (NCCL_[A-Z0-9_]+ and "
            "CUDA_VISIBLE_DEVICES), so nothing checks what it says") in result.records
    assert "SPEED_UP" not in _page(work)


def test_in_an_older_set_such_a_key_is_a_note(tmp_path):
    root = copy_committed_set(tmp_path, "h200x1_final5")
    edit_record(root, "model.json", lambda r: r.update(note=CLAIM))
    remake_manifest(root)
    result = verify(root, recompute=True, report_pending=True)
    assert not [p for p in result.problems() if "'note'" in p]
    assert any(n.startswith("model.json: 'note': not a field prepare-model") for n in result.notes)


def test_an_older_sets_device_folder_is_named_as_unchecked(tmp_path):
    root = copy_committed_set(tmp_path, "h200x1_final5")
    result = verify(root, recompute=False)
    count = sum(1 for p in (root / "pipeline").rglob("*") if p.is_file())
    assert (f"results/h200x1_final5/pipeline/: the device's own logs, benchmarks and records ({count} files: its "
            "MANIFEST.device.sha256 and verify.device.json among them), hashed but not checked by verify: what they "
            "say is not the evidence's") in result.notes
