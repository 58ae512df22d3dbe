"""A set whose runs started after the report stage began to write a page format records that
format or a newer one (scope.PAGE_FORMAT_SINCE), as one whose runs started after PAGE_SINCE
records one at all. Before: a set made with format 3 whose evidence.json `report_page` was
lowered to 2 or 1, its page written again in that format and its manifest made again, passed
verify, its page's first line without format 3's narrower probe (and, as format 1, with the
raw `Reward/<term>` that format 2 writes as text)."""

import shutil

import pytest
from set_copies import REPO, copy_committed_set, edit_record, made_current, remake_manifest, report_file

from sacscale.evidence import scope
from sacscale.evidence.verify import verify
from sacscale.report.build import write_report
from sacscale.report.set_inputs import set_inputs

SET = "h200x1_shared_short"  # page format 3 once made current; its runs started 2026-12-03T22:38
RUN = "shared_r1_n1_pool7"
RUN_STARTED = "2026-12-03T22:38:02.198+00:00"


@pytest.fixture(scope="module")
def current(tmp_path_factory):
    root = copy_committed_set(tmp_path_factory.mktemp("current"), SET)
    docs = root.parent.parent / "docs"  # the checkout's deviations document, which the page links
    docs.mkdir()
    shutil.copy2(REPO / "docs" / "deviations.md", docs / "deviations.md")
    return made_current(root)


@pytest.fixture
def work(current, tmp_path):
    shutil.copytree(current.parent.parent, tmp_path / "repo")
    return tmp_path / "repo" / "results" / SET


def lowered(root, page: int):
    """The set relabelled as the reviewer did: report_page lowered, the manifest made, the
    page written again by the report stage in that format, the manifest made again."""
    edit_record(root, "evidence.json", lambda record: record.update(report_page=page))
    remake_manifest(root)
    reports = report_file(root, "report.md").parent
    write_report(output_md=reports / "report.md", output_html=reports / "report.html",
                 figures_dir=reports / "figures", prepare=lambda others: {**others, "page_format": page},
                 **set_inputs(root, reports))
    remake_manifest(root)
    return root


def since_the_runs(monkeypatch, formats):
    """PAGE_FORMAT_SINCE as if each of `formats` had come before this set's runs started."""
    earlier = {f: "2026-12-03T00:00:00+00:00" for f in formats}
    monkeypatch.setattr(scope, "PAGE_FORMAT_SINCE", {**getattr(scope, "PAGE_FORMAT_SINCE", {}), **earlier},
                        raising=False)


@pytest.mark.parametrize("page", [2, 1])
def test_a_page_format_lowered_below_the_one_written_when_the_runs_started_is_named(work, monkeypatch, page):
    since_the_runs(monkeypatch, [2, 3])
    result = verify(lowered(work, page))
    assert result.scope == [
        f"evidence.json: report_page {page}, though run {RUN} started at {RUN_STARTED}, after the report stage "
        "began to write page format 3 (2026-12-03T00:00:00+00:00): lowered?"]
    assert not result.ok


def test_format_1_where_format_2_was_the_newest_names_format_2(work, monkeypatch):
    since_the_runs(monkeypatch, [2])
    result = verify(lowered(work, 1))
    assert result.scope == [
        f"evidence.json: report_page 1, though run {RUN} started at {RUN_STARTED}, after the report stage began "
        "to write page format 2 (2026-12-03T00:00:00+00:00): lowered?"]


def test_the_format_written_when_the_runs_started_passes(work, monkeypatch):
    """Format 2 recorded by a set whose runs started after format 2 came and before format 3."""
    since_the_runs(monkeypatch, [2])
    result = verify(lowered(work, 2))
    assert result.ok, result.problems()


def test_a_set_run_after_format_3_came_that_records_format_2_is_named(work):
    """With the times format 2 and 3 came (the commits that made the report stage write them)."""
    edit_record(work, f"runs/{RUN}/run.json", lambda record: record.update(started_at="2026-12-05T17:30:25.003+00:00"))
    result = verify(lowered(work, 2))
    assert ("evidence.json: report_page 2, though run shared_r1_n1_pool7 started at 2026-12-05T17:30:25.003+00:00, "
            "after the report stage began to write page format 3 (2026-12-05T17:14:00+00:00): lowered?"
            in result.scope), result.scope


def test_a_committed_set_of_format_1_run_before_format_2_came_keeps_its_format():
    """h200x1_shared_recheck records format 1; its runs started 2026-12-05T03:08, before format 2."""
    assert scope.report_page_of(REPO / "results" / "h200x1_shared_recheck") == (1, None)
