"""A set whose report folder (reports/S) another user owned verified with no word: they may
rewrite the page after verify read it, and the verdict read as if it held for good. Verify
now names, as a note (another user's set is one root may well verify), each of the set's
two folders another user can change, by the rule the commands use for other users' folders
and files (sacscale.atomic): the folder itself, a folder it lies in, or a file inside."""

import os

import pytest

from set_copies import report_file

from sacscale.evidence.verify import verify

OTHER = 1001
SINCE = "another user, who can change its files after this verification: the verdict holds for them as read now"
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user takes root")


def _owner_notes(result):
    return [note for note in result.notes if "can change its files after this verification" in note]


def test_a_set_of_ones_own_has_no_such_note(current):
    result = verify(current)
    assert result.ok, result.problems()
    assert _owner_notes(result) == []


@needs_root
def test_a_report_folder_of_another_user_is_noted(work):
    os.chown(report_file(work, ""), OTHER, OTHER)
    result = verify(work)
    assert result.ok, result.problems()
    assert _owner_notes(result) == [f"reports/{work.name}: belongs to uid {OTHER}, {SINCE}"]


@needs_root
def test_a_page_of_another_user_is_noted(work):
    os.chown(report_file(work, "report.md"), OTHER, OTHER)
    assert _owner_notes(verify(work)) == [f"reports/{work.name}/report.md: belongs to uid {OTHER}, {SINCE}"]


def test_a_record_others_may_write_is_noted(work):
    os.chmod(work / "summary.json", 0o646)
    assert _owner_notes(verify(work)) == [
        f"results/{work.name}/summary.json: is writable by other users (mode 0646), "
        "who can change its files after this verification: the verdict holds for them as read now"]
