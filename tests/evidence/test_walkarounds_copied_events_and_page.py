"""Walk-arounds of verify: events copied between the runs of a set of the
current evidence format (evidence.json) with everything derived regenerated, and
report.html, the page readers open, edited where report.md is not: a changed number in
a visible table, a stylesheet or script that hides or rewrites one, the page removed.
Each on a copy of a committed set, as tests/evidence/test_walkarounds.py does."""

import json
import shutil

import pytest

from sacscale.evidence import manifest
from sacscale.evidence.verify import verify
from set_copies import copy_committed_set
from test_walkarounds import R1, R2, SET, event_file, records, regenerate


@pytest.fixture
def work(tmp_path):
    """results/SET and reports/SET, copied into a tree of the same layout."""
    return copy_committed_set(tmp_path, SET)


def make_current_format(root):
    (root / "evidence.json").write_text(json.dumps({"format": 2, "budget_bytes": 4 * 1024 * 1024, "left_out": []}))


def test_a_current_format_copy_verifies(work):
    make_current_format(work)
    manifest.write(work)
    result = verify(work)
    assert not records(result), records(result)


@pytest.mark.parametrize("same_name", [False, True])
def test_events_copied_between_runs_of_a_current_format_set_fail(work, same_name):
    make_current_format(work)
    mine, theirs = event_file(work, R1), event_file(work, R2)
    if same_name:
        shutil.copy2(theirs, mine)
    else:
        mine.unlink()
        shutil.copy2(theirs, mine.parent / theirs.name)
    regenerate(work)  # metrics, summary and manifest (evidence.json hashed with the rest)
    result = verify(work)
    assert not result.ok
    problems = records(result)
    assert any(p.startswith(f"record: {R1}: ") for p in problems), problems
    assert any("the same event file content is in run" in p or "events copied between runs" in p
               for p in problems), problems


def page(work):
    return work.parent.parent / "reports" / SET / "report.html"


def html_problems(result):
    return [p for p in result.problems() if f"reports/{SET}/report.html" in p]


def test_the_untouched_page_is_read_cell_by_cell(work):
    result = verify(work)
    assert result.ok, result.problems()
    assert "report.html's tables checked the same way (" in result.report_check
    assert f"reports/{SET}/report.html" in result.checked


def shown_mean(work) -> str:
    summary = json.loads((work / "summary.json").read_text())
    return f"{summary['configs']['n1_obsnorm_lowent']['mean']:,.0f}"


def test_a_changed_number_in_the_pages_table_fails(work):
    text = page(work).read_text()
    shown = shown_mean(work)
    assert f">{shown}<" in text
    page(work).write_text(text.replace(f">{shown}<", ">99,999<", 1))
    result = verify(work)
    assert not result.ok
    assert any("does not match" in p for p in html_problems(result)), result.problems()


@pytest.mark.parametrize("added, says", [
    ("<style>td.x { display: none }</style>", "a stylesheet the report stage does not write"),
    ("<script>document.querySelector('td').textContent='99,999'</script>", "a <script> element"),
    ('<p style="visibility: hidden">x</p>', "an inline style"),
    ('<p class="hidden-by-sheet">x</p>', "a class 'hidden-by-sheet'"),
    ('<img src="x.png" onerror="alert(1)">', "an event handler 'onerror'"),
    ('<a href="javascript:alert(1)">x</a>', "a href that runs or shows another page"),
    ('<link rel="stylesheet" href="other.css">', "a <link> element"),
    ('<meta http-equiv="refresh" content="0; url=other.html">', "a <meta> with content, http-equiv"),
])
def test_what_could_hide_or_rewrite_a_cell_fails(work, added, says):
    text = page(work).read_text()
    page(work).write_text(text.replace("<body>", "<body>" + added, 1))
    problems = html_problems(verify(work))
    assert any(says in p and "does not match the evidence" in p for p in problems), problems


def test_a_true_table_hidden_and_a_false_one_shown_fails(work):
    """The page keeps the true table inside a hidden element and shows an edited copy."""
    text = page(work).read_text()
    shown = shown_mean(work)
    start = text.index("<table")
    end = text.index("</table>", text.index(f">{shown}<")) + len("</table>")
    true_table = text[start:end]
    assert f">{shown}<" in true_table
    edited = text[:start] + f'<div hidden>{true_table}</div>' + true_table.replace(f">{shown}<", ">99,999<") + \
        text[end:]
    page(work).write_text(edited)
    assert any("does not match" in p for p in html_problems(verify(work))), html_problems(verify(work))


def test_a_removed_page_fails(work):
    page(work).unlink()
    problems = html_problems(verify(work))
    assert any("report.html: missing" in p for p in problems), problems
