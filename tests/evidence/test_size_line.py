"""The line a pipeline invocation ends with on its set's size: the set's verification runs
before the report exists, so only this line sees the whole set against its budget."""

from pathlib import Path

from sacscale.evidence.scope import BUDGET_BYTES, set_bytes, size_line
from set_copies import copy_committed_set, report_file

REPO = Path(__file__).resolve().parents[2]
SET = "h200x1_shared_short"  # a committed set of the budget's format


def copy_set(tmp_path: Path) -> Path:
    return copy_committed_set(tmp_path, SET)


def test_a_set_inside_its_budget_says_its_size(tmp_path):
    root = copy_set(tmp_path)
    assert size_line(root) == f"size: {set_bytes(root):,} bytes with the report (budget {BUDGET_BYTES:,})"


def test_a_report_that_takes_the_set_over_its_budget_is_named(tmp_path):
    root = copy_set(tmp_path)
    extra = BUDGET_BYTES - set_bytes(root) + 1
    (report_file(root, "figures") / "big.png").write_bytes(b"\0" * extra)
    line = size_line(root)
    assert line.startswith(f"size: {BUDGET_BYTES + 1:,} bytes with the report, OVER the budget of {BUDGET_BYTES:,}")


def test_a_set_made_before_the_budget_has_no_line():
    assert size_line(REPO / "results" / "h200x1_final5") is None
