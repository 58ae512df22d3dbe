"""The report's Environment list against environment.json: a page that said another GPU
than the record (`NVIDIA B200` over an H200), or a record edited under an unchanged page,
passed verify, which checked the pages' tables and ratios only."""

import json

import pytest

from sacscale.evidence.verify import verify
from set_copies import copy_committed_set, edit_text, report_file

SET = "h200x1_shared_short"
GPU = "NVIDIA H200 (143,155 MiB)"


def _problems(root):
    return verify(root).problems()


def test_the_untouched_copy_verifies(tmp_path):
    assert verify(copy_committed_set(tmp_path, SET)).ok


@pytest.mark.parametrize("page", ["report.md", "report.html"])
def test_another_gpu_on_the_page_is_named(tmp_path, page):
    root = copy_committed_set(tmp_path, SET)
    edit_text(report_file(root, page), GPU, "NVIDIA B200 (183,359 MiB)")
    problems = _problems(root)
    assert [p for p in problems if f"reports/{SET}/{page}: its Environment list does not show 'GPUs: {GPU}" in p], \
        problems


def test_a_record_edited_under_an_unchanged_page_is_named(tmp_path):
    root = copy_committed_set(tmp_path, SET)
    record = json.loads((root / "environment.json").read_text())
    record["torch"]["gpus"][0]["name"] = "NVIDIA A100"
    (root / "environment.json").write_text(json.dumps(record, indent=2))
    problems = _problems(root)
    assert [p for p in problems if "its Environment list does not show 'GPUs: NVIDIA A100" in p], problems


def test_a_record_the_report_stage_cannot_show_is_named_not_skipped(tmp_path):
    root = copy_committed_set(tmp_path, SET)
    record = json.loads((root / "environment.json").read_text())
    record["torch"] = "2.11"  # a string where the report stage reads an object
    (root / "environment.json").write_text(json.dumps(record, indent=2))
    problems = _problems(root)
    assert [p for p in problems if p.startswith("derived: environment.json: not a record the report stage wrote its "
                                                 "Environment list from")], problems
