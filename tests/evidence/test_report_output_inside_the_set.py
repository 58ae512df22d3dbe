"""`sacscale report --run-set S --output-dir S` wrote report.md, report.html, numbers.json
and the figures into the set's own folder, whose files are the evidence the report is made
from (verify then named 26 extra files): refused, nothing written. In a finished set (its
manifest made) the finished-set rule answers first, in a set the pipeline plans and has not
finished the planned-set rule (unless given as the pipeline's job, which meets report's own check)."""

import pytest

from cli_runs import sacscale
from set_copies import copy_committed_set


def _refused_and_untouched(root, out, expected, pipeline_set=None):
    before = sorted(p.relative_to(root) for p in root.rglob("*"))
    done = sacscale("report", "--run-set", root, "--output-dir", out, pipeline_set=pipeline_set)
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
    """Given as the pipeline's own job (a hand command meets the planned-set rule first, below)."""
    root = copy_committed_set(tmp_path, "h200x1_shared_short")
    (root / "MANIFEST.sha256").unlink()
    out = root / inside if inside else root
    _refused_and_untouched(root, out, f"--output-dir {out}: inside the run set {root}", pipeline_set=root.name)


@pytest.mark.parametrize("inside", ["", "runs"])
def test_a_set_the_pipeline_is_making_is_refused_by_the_planned_set_rule(tmp_path, inside):
    root = copy_committed_set(tmp_path, "h200x1_shared_short")
    (root / "MANIFEST.sha256").unlink()
    out = root / inside if inside else root
    _refused_and_untouched(root, out, f"--output-dir: {out} is inside results/{root.name}, a run set the pipeline "
                                      "plans and has not finished")
