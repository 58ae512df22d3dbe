"""Walk-arounds of verify (docs/faults.md row 27), each on a copy of a
committed set: a table appended with numbers of its own (in Markdown or raw HTML), a
changed number in the phase-time or evaluation table (tables numbers.json does not hold),
a right-to-left override that shows a cell's number reversed, a comment that a browser ends
at `--!>` where Python's parser does not, markup in report.md itself, and an evidence.json
budget that is not a number of bytes."""

import json
from pathlib import Path

import pytest

from sacscale.evidence import manifest
from sacscale.evidence.verify import verify
from set_copies import copy_committed_set, edit_text, report_file

REPO = Path(__file__).resolve().parents[2]
SET = "h200x1_shared_short"
RATIO_HTML = '<td style="text-align: right;">1.719x</td>'  # the seed table's ratio in report.html
RATIO_MD = "| 1.719x |"
EVAL_ROW = "| n1_pool7 | 2 | 614,400 | 1.118 | 2.360x | 2.527 | 7.588x | 1.000 | 0.187 | 0.166 |"
PHASE_ROW = "| n1_pool7 | 0 | 2 | 29.479 |"


@pytest.fixture
def work(tmp_path):
    return copy_committed_set(tmp_path, SET)


report = report_file
edit = edit_text


def failing(work, page, says):
    result = verify(work)
    assert not result.ok
    found = [p for p in result.problems() if f"{page}: " in p and says in p]
    assert found, result.problems()


def test_the_untouched_copy_verifies(work):
    assert verify(work).ok


@pytest.mark.parametrize("added", [
    "\n\n| speed-up | value |\n|---|---|\n| n2_shared / n1_pool7 | 9.999x |\n",
    "\n\n<table><tr><td>speed-up</td><td>9.999x</td></tr></table>\n",  # raw HTML: GitHub renders it
])
def test_a_table_of_its_own_appended_to_report_md_fails(work, added):
    page = report(work, "report.md")
    page.write_text(page.read_text() + added)
    failing(work, "report.md", "a table the report stage does not write")


@pytest.mark.parametrize("old, new, says", [
    (EVAL_ROW, EVAL_ROW.replace("| 0.187 |", "| 0.987 |"), "the evaluation table, row 1, column 'kernel lin'"),
    (PHASE_ROW, PHASE_ROW.replace("29.479", "9.479"), "the phase-time table, row 1"),
])
def test_a_changed_number_in_a_regenerated_table_fails(work, old, new, says):
    edit(report(work, "report.md"), old, new)
    failing(work, "report.md", says)


@pytest.mark.parametrize("page, old, new", [
    ("report.html", RATIO_HTML, RATIO_HTML.replace(">1.719x", ">\u202e1.719x")),  # shown as x917.1
    ("report.md", RATIO_MD, "| \u202e1.719x |"),
])
def test_a_reordering_character_in_a_cell_fails(work, page, old, new):
    edit(report(work, page), old, new)
    failing(work, page, "invisible or reordering character")


@pytest.mark.parametrize("page, old, new", [
    ("report.html", RATIO_HTML, RATIO_HTML.replace(">1.719x", "><!--a--!>9.999x<!-- -->1.719x")),
    ("report.md", "## Verdict", "<!--a--!>9.999x speed-up<!-- -->\n\n## Verdict"),
])
def test_a_comment_a_browser_ends_early_fails(work, page, old, new):
    edit(report(work, page), old, new)
    failing(work, page, "an HTML comment")


def test_markup_in_report_md_fails(work):
    edit(report(work, "report.md"), "## Verdict", '<font color="white">x</font>\n\n## Verdict')
    failing(work, "report.md", "a <font> element")


@pytest.mark.parametrize("budget", ["1e400", '"4194304"', "-5", "true", "4194305"])
def test_a_budget_that_is_not_bytes_fails_in_one_line(work, budget):
    path = work / "evidence.json"
    data = json.loads(path.read_text())
    text = json.dumps(data).replace(f'"budget_bytes": {data["budget_bytes"]}', f'"budget_bytes": {budget}')
    assert text != json.dumps(data)
    path.write_text(text)
    manifest.write(work)  # a forger rehashes what they changed
    failing(work, "evidence.json", "budget_bytes")
