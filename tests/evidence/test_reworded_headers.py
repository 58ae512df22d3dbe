"""A table header reworded by a later version of the report is no difference to verify
(it reads numbers, not words): the committed set's report.md, report.html and numbers.json keep the
words they were written in, and every value is still compared, column by column."""

import json

from sacscale.evidence.report_check import in_stored_words
from test_report_numbers import _check, _set


def _reword(out, table: str, old: str, new: str) -> None:
    """The set's numbers.json and report.md as an older report version would have worded a
    column: the header renamed in both, every value where it was."""
    path = out / "numbers.json"
    numbers = json.loads(path.read_text())
    t = numbers["tables"][table]
    t["header"] = [new if h == old else h for h in t["header"]]
    t["kinds"] = {(new if c == old else c): k for c, k in t["kinds"].items()}
    for row in t["rows"]:
        row["cells"] = {(new if c == old else c): v for c, v in row["cells"].items()}
        row["withheld"] = [new if c == old else c for c in row["withheld"]]
    path.write_text(json.dumps(numbers))
    md = out / "report.md"
    assert f"| {old} |" in md.read_text()
    md.write_text(md.read_text().replace(f"| {old} |", f"| {new} |"))
    page = out / "report.html"
    assert f">{old}</th>" in page.read_text()
    page.write_text(page.read_text().replace(f">{old}</th>", f">{new}</th>"))


def test_a_reworded_header_verifies(tmp_path):
    root, out, summary, metrics = _set(tmp_path)
    _reword(out, "configurations", "mean", "average")
    result = _check(root, summary, metrics)
    assert result.derived == [], result.derived


def test_a_reworded_header_still_has_its_numbers_checked(tmp_path):
    root, out, summary, metrics = _set(tmp_path)
    _reword(out, "configurations", "mean", "average")
    md = out / "report.md"
    row = next(line for line in md.read_text().splitlines() if line.startswith("| ours_n1 |") and "," in line)
    cells = row.split(" | ")
    cells[4] = "9,999"  # the reworded mean column
    md.write_text(md.read_text().replace(row, " | ".join(cells)))
    result = _check(root, summary, metrics)
    assert any("'average'" in p and "does not match the evidence" in p for p in result.derived), result.derived


def test_columns_cannot_swap_names():
    fresh = {"tables": {"t": {"header": ["configuration", "a", "b"], "kinds": {"a": "rate", "b": "rate"},
                              "rows": [{"key": ["x"], "cells": {"a": [1.0], "b": [2.0]}, "shown": True,
                                        "withheld": []}]}}}
    swapped = {"tables": {"t": {"header": ["configuration", "b", "a"]}}}
    reworded = {"tables": {"t": {"header": ["configuration", "A", "B"]}}}
    assert in_stored_words(swapped, fresh) == fresh  # left as recomputed: the swap shows as a difference
    assert in_stored_words(reworded, fresh)["tables"]["t"]["rows"][0]["cells"] == {"A": [1.0], "B": [2.0]}
