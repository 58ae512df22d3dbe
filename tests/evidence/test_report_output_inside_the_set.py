"""`sacscale report --run-set S --output-dir S` wrote report.md, report.html, numbers.json
and the figures into the set's own folder, whose files are the evidence the report is made
from (verify then named 26 extra files): refused, nothing written."""

import pytest

from cli_runs import sacscale
from set_copies import copy_committed_set


@pytest.mark.parametrize("inside", ["", "runs"])
def test_the_report_is_not_written_into_the_evidence_it_is_made_from(tmp_path, inside):
    root = copy_committed_set(tmp_path, "h200x1_shared_short")
    before = sorted(p.relative_to(root) for p in root.rglob("*"))
    out = root / inside if inside else root
    done = sacscale("report", "--run-set", root, "--output-dir", out)
    assert done.returncode == 2, done.stderr
    assert f"--output-dir {out}: inside the run set {root}" in done.stderr
    assert sorted(p.relative_to(root) for p in root.rglob("*")) == before
