"""`sacscale report --run-set` does not read a set's attempts folder or the checkout's
deviations document through another user's symbolic link: root building that user's report
listed the names in root's private folder, and linked root's private file, in a page the
user reads. Refused in one line naming the link; our own links are still followed."""

import json
import os

import pytest

from cli_runs import one_line, other_users_link, sacscale
from sacscale.commands.report import FINISHED
from sacscale.report.record_error import RecordError
from sacscale.report.set_inputs import set_inputs


@pytest.fixture
def checkout(tmp_path):
    """A finished set's files (contents unread before the inputs are found) and a private
    folder of ours with a file in it."""
    results = tmp_path / "co" / "results" / "S"
    results.mkdir(parents=True)
    for name in FINISHED:
        (results / name).write_text("{}")
    (results / "plan.json").write_text(json.dumps({"runs": []}))
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    (private / "secret-name").write_text("x")
    return results, private


def _needs_root():
    if os.getuid() != 0:
        pytest.skip("giving a link to another user needs root")


def test_an_attempts_folder_through_another_users_link_is_refused(checkout):
    _needs_root()
    results, private = checkout
    (results.parents[1] / "logs").mkdir()
    link = other_users_link(results.parents[1] / "logs" / "S" / "attempts", private)
    with pytest.raises(RecordError, match=rf"{link}: another user's symbolic link \(uid 1001\)"):
        set_inputs(results, results.parents[1] / "reports" / "S")


def test_a_deviations_document_through_another_users_link_is_refused(checkout, tmp_path):
    _needs_root()
    results, private = checkout
    link = other_users_link(results.parents[1] / "docs" / "deviations.md", private / "secret-name")
    with pytest.raises(RecordError, match=rf"{link}: another user's symbolic link \(uid 1001\)"):
        set_inputs(results, results.parents[1] / "reports" / "S")
    out = tmp_path / "out"
    one_line(sacscale("report", "--run-set", results, "--output-dir", out), f"{link}: another user's symbolic link")
    assert not out.exists()


def test_our_own_links_are_followed(checkout):
    results, private = checkout
    (results.parents[1] / "logs" / "S").mkdir(parents=True)
    (results.parents[1] / "logs" / "S" / "attempts").symlink_to(private)
    (results.parents[1] / "docs").mkdir()
    (results.parents[1] / "docs" / "deviations.md").symlink_to(private / "secret-name")
    inputs = set_inputs(results, results.parents[1] / "reports" / "S")
    assert inputs["attempts"] == ["secret-name"]
    assert inputs["deviations"] == str(results.parents[1] / "docs" / "deviations.md")
