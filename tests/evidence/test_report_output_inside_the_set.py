"""`sacscale report --run-set S --output-dir S` wrote report.md, report.html, numbers.json
and the figures into the set's own folder, whose files are the evidence the report is made
from (verify then named 26 extra files): refused, nothing written. In a finished set (its
manifest made) the finished-set rule answers first; a set still being made meets report's own check."""

import pytest

from cli_runs import sacscale
from set_copies import copy_committed_set


def _refused_and_untouched(root, out, expected):
    before = sorted(p.relative_to(root) for p in root.rglob("*"))
    done = sacscale("report", "--run-set", root, "--output-dir", out)
    assert done.returncode == 2, done.stderr
    assert expected in done.stderr
    assert sorted(p.relative_to(root) for p in root.rglob("*")) == before


@pytest.mark.parametrize("inside", ["", "runs"])
def test_the_report_is_not_written_into_the_evidence_it_is_made_from(tmp_path, inside):
    root = copy_committed_set(tmp_path, "h200x1_shared_short")
    out = root / inside if inside else root
    _refused_and_untouched(root, out, f"is inside results/{root.name}, a finished run set")


@pytest.mark.parametrize("inside", ["", "runs"])
def test_a_set_being_made_is_refused_by_reports_own_check(tmp_path, inside):
    root = copy_committed_set(tmp_path, "h200x1_shared_short")
    (root / "MANIFEST.sha256").unlink()
    out = root / inside if inside else root
    _refused_and_untouched(root, out, f"--output-dir {out}: inside the run set {root}")
