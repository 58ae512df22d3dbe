"""The report's sentences: the at-a-glance line and the claim's
verdict repeat the tables' ratio, but only the tables were checked, so the headline ratio
edited to 9.999x in either page passed verify."""

import pytest

from sacscale.evidence.verify import verify
from set_copies import copy_committed_set, report_file

SET = "h200x1_shared_short"


@pytest.mark.parametrize("page, shown", [
    ("report.md", "= 1.719x (n = 2"),
    ("report.html", "= 1.719x (n = 2"),
    ("report.md", "= 1.719x, n = 2 paired"),
])
def test_a_ratio_in_the_text_that_no_table_shows_is_named(tmp_path, page, shown):
    root = copy_committed_set(tmp_path, SET)
    path = report_file(root, page)
    text = path.read_text()
    assert shown in text
    path.write_text(text.replace(shown, shown.replace("1.719x", "9.999x"), 1))
    problems = verify(root).problems()
    assert problems == [f"derived: reports/{SET}/{page}: the ratio 9.999x in its text is in none of its tables, "
                        "which are checked against the evidence: does not match the evidence"], problems


def test_the_committed_pages_ratios_are_all_in_their_tables(tmp_path):
    root = copy_committed_set(tmp_path, SET)
    assert verify(root).ok
