"""A page beside the report (reports/S/README.md, which a repository browser shows first, or
another .html) passed verify: only the files the report stage writes were read, by name.
Any other file in the report folder is named; Snakemake's audit zip is a note."""

import pytest

from set_copies import report_file

from sacscale.evidence.verify import verify


def _report_lines(root):
    return [p for p in verify(root).problems() if "not a file the report stage writes" in p]


def test_the_current_copy_has_no_other_file(current):
    assert _report_lines(current) == []


@pytest.mark.parametrize("name", ["README.md", "other.html", "figures/claims.md", "figures/extra.png"])
def test_a_page_beside_the_report_is_named(work, name):
    page = report_file(work, name)
    page.write_text("# verified: 2x faster\n")
    assert _report_lines(work) == [
        f"derived: reports/{work.name}: {name}: not a file the report stage writes there (report.md, report.html, "
        "numbers.json, figures/), so nothing checks what it says"]


def test_the_audit_zip_is_a_note_not_a_problem(work):
    report_file(work, "audit.zip").write_bytes(b"PK\x05\x06" + bytes(18))
    result = verify(work)
    assert result.ok, result.problems()
    assert any(n.startswith(f"reports/{work.name}/audit.zip: Snakemake's audit copy") for n in result.notes)


def test_a_second_video_beside_the_one_render_best_wrote_is_named(work):
    report_file(work, "figures/best_run.gif").write_bytes(report_file(work, "figures/best_run.webp").read_bytes())
    assert _report_lines(work) == [] and (
        f"derived: reports/{work.name}/figures: best_run.webp, best_run.gif: two videos, but render-best writes one "
        "(the one figures/best_run.json names), so nothing checks the other") in verify(work).problems()
