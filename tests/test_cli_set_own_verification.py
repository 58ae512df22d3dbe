"""A finished set's own verify.json written by a verification other than the pipeline's.
Before: `verify S --output S/verify.json` (no --report-pending), once the report was written,
recorded a report check the set was then held to for good: `verify S` failed with
`derived: verify.json: report_check ...`, and neither another verification nor the pipeline
could restore it. Now only the pipeline's form writes it (--report-pending, before the set's
report); any other is refused in one line saying what to do instead, exit 2, nothing written."""

import sys
from pathlib import Path

import pytest

from cli_runs import SET, one_line, sacscale

sys.path.insert(0, str(Path(__file__).parent / "evidence"))
from set_copies import copy_committed_set, report_file  # noqa: E402


@pytest.fixture
def finished(tmp_path):
    return copy_committed_set(tmp_path, SET)


def _instead(root):
    return (f"`sacscale verify {root}` alone re-checks it without writing, or write the verification elsewhere "
            "(--output /tmp/verify.json)")


def test_a_plain_verification_over_the_sets_own_is_refused(finished):
    before = (finished / "verify.json").read_bytes()
    done = sacscale("verify", finished, "--output", finished / "verify.json")
    one_line(done, f"sacscale verify: error: argument --output: {finished / 'verify.json'} is {SET}'s own "
                   f"verify.json, which only the pipeline's verification writes (with --report-pending, before "
                   f"the set's report); {_instead(finished)}")
    assert (finished / "verify.json").read_bytes() == before


def test_the_pipelines_form_once_the_report_is_written_is_refused(finished):
    before = (finished / "verify.json").read_bytes()
    done = sacscale("verify", finished, "--report-pending", "--output", finished / "verify.json")
    one_line(done, f"argument --output: {finished / 'verify.json'} is {SET}'s own verify.json, from which its "
                   f"report {report_file(finished, 'report.md')} was made: written again the set no longer "
                   f"verifies; {_instead(finished)}")
    assert (finished / "verify.json").read_bytes() == before


def test_the_pipelines_form_before_the_report_writes_it(finished):
    """The verify rule: after the manifest, before the report."""
    report_file(finished, "report.md").unlink()
    (finished / "verify.json").unlink()
    done = sacscale("verify", finished, "--report-pending", "--output", finished / "verify.json")
    assert "error:" not in done.stderr, done.stderr
    assert (finished / "verify.json").is_file()


def test_a_verification_written_elsewhere_is_fine(finished, tmp_path):
    done = sacscale("verify", finished, "--output", tmp_path / "verify.json")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "verify.json").is_file()
