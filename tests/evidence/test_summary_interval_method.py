"""summary.json's intervals are recomputed with aggregate's method for a set made after
aggregate took it (the pipeline passes no other): a summary made again with the percentile
method, naming none, is named; a set whose runs started before keeps the method it used,
said among the notes."""

import json

from set_copies import REPO, copy_committed_set, made_current

from sacscale.evidence.derived import recompute_summary
from sacscale.evidence.interval_method import interval_method
from sacscale.evidence.verify import verify

SET = "h200x1_shared_sync"


def _summary_made_again(root, method):
    plan = json.loads((root / "plan.json").read_text())
    metrics = [json.loads((root / "metrics" / f"{run['name']}.json").read_text()) for run in plan["runs"]]
    (root / "summary.json").write_text(json.dumps(recompute_summary(plan, metrics, method), indent=1))


def test_a_summary_made_with_another_method_is_named(tmp_path):
    root = copy_committed_set(tmp_path, SET)
    _summary_made_again(root, "percentile")
    made_current(root)  # its manifest and report made again from it
    assert verify(root).derived == [
        "summary.json: no ci_bootstrap, which means the percentile method, but run shared_r1_n1_pool7 started at "
        "2026-12-04T14:11:30.144+00:00, after aggregate's intervals became 'bca' (2026-12-03T19:43:24+00:00), and "
        "the pipeline passes it no other method"]


def test_a_summary_made_again_with_the_codes_method_verifies(tmp_path):
    root = copy_committed_set(tmp_path, SET)
    _summary_made_again(root, "bca")
    made_current(root)
    assert verify(root).ok


def test_an_unknown_method_is_named():
    stored = json.loads((REPO / "results" / SET / "summary.json").read_text())
    found = interval_method(REPO / "results" / SET, {**stored, "ci_bootstrap": "studentized"})
    assert found.problems == ["summary.json: ci_bootstrap 'studentized' is no interval method aggregate knows (bca, "
                              "percentile)"]


def test_an_older_set_keeps_its_method_and_says_so():
    root = REPO / "results" / "h200x1_final5"
    found = interval_method(root, json.loads((root / "summary.json").read_text()))
    assert (found.method, found.problems) == ("percentile", [])
    assert found.notes == ["summary.json: ci_bootstrap: not recorded by this older set, so its intervals are "
                           "recomputed with the percentile method it used then: the set's runs started before "
                           "aggregate's intervals became 'bca' (2026-12-03T19:43:24+00:00)"]
