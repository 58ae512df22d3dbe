"""manifest.json and verify.json are written from the manifest or after it, so no hash binds
them, and the report's Evidence line is written from them: each edited (with the page made
to agree) passed. verify makes manifest.json again from the manifest and compares
verify.json's verdict and counts with its own."""

import json

import pytest
from set_copies import copy_committed_set, current_copy

from sacscale.evidence.verify import verify

SET = "h200x1_shared_short"


def _edit(root, name, **values):
    path = root / name
    path.write_text(json.dumps({**json.loads(path.read_text()), **values}))


@pytest.mark.parametrize("name, values, says", [
    ("manifest.json", {"files": 4096}, "manifest.json: files 4096, the manifest gives 36"),
    ("manifest.json", {"bytes": 987654321}, "manifest.json: bytes 987654321, the manifest gives"),
    ("verify.json", {"files_checked": 4096, "runs_checked": 64},
     "verify.json: files_checked 4096, this verification 36"),
    ("verify.json", {"ok": False}, "verify.json: ok False, this verification True"),
])
def test_an_edited_record_is_named(tmp_path, name, values, says):
    root = copy_committed_set(tmp_path, SET)
    _edit(root, name, **values)
    result = verify(root)
    assert any(says in p for p in result.derived), result.derived


def test_the_pipelines_own_verification_does_not_read_the_verify_json_it_replaces(tmp_path):
    root = copy_committed_set(tmp_path, SET)
    _edit(root, "verify.json", files_checked=1)
    result = verify(root, report_pending=True)
    assert result.ok, result.problems()


@pytest.mark.parametrize("name, values, says", [
    ("manifest.json", {"reproduced": True, "signed_by": "external auditor"},
     "manifest.json: holds 'reproduced', which is not written from the manifest"),
    ("verify.json", {"signed_by": "external auditor"}, "verify.json: holds 'signed_by', which a verification does not"),
    ("verify.json", {"derived": ["summary.json: mean 1.2, recomputed 1.7"]},
     "verify.json: says it passed, yet lists derived ['summary.json: mean 1.2"),
])
def test_what_neither_writer_writes_is_named(tmp_path, name, values, says):
    root = copy_committed_set(tmp_path, SET)
    _edit(root, name, **values)
    result = verify(root)
    assert any(says in p for p in result.derived), result.derived


def test_a_set_made_by_this_code_has_the_pipelines_whole_verification(tmp_path):
    root = current_copy(tmp_path, SET)
    assert verify(root).ok
    _edit(root, "verify.json", report_check="report: every page hashed and signed")
    stored = json.loads((root / "verify.json").read_text())
    del stored["notes"]
    (root / "verify.json").write_text(json.dumps(stored))
    derived = verify(root).derived
    assert any("verify.json: lacks 'notes', which this code's verification writes" in p for p in derived), derived
    assert any("verify.json: report_check 'report: every page hashed and signed', where the pipeline's" in p
               for p in derived), derived
