"""verify derives the correctness probe's verdicts from its own numbers: a record whose
`pass` its comparisons do not give, rewritten together with its manifest, passed."""

import json

import pytest
from set_copies import REPO, copy_committed_set, remake_manifest

from sacscale.evidence.probe_code_settings import code_settings_problems
from sacscale.evidence.probe_record import probe_problems
from sacscale.evidence.verify import verify

SET = "h200x1_shared_short"


def _probe(root):
    return json.loads((root / "correctness.json").read_text())


def _rewrite(root, record):
    (root / "correctness.json").write_text(json.dumps(record, indent=1))
    remake_manifest(root)


def test_every_committed_probe_record_gives_its_own_verdicts():
    records = sorted((REPO / "results").glob("*/correctness.json"))
    assert len(records) >= 10
    for path in records:
        assert probe_problems(json.loads(path.read_text())) == [], path


def test_a_failed_verdict_over_passing_comparisons_is_named(tmp_path):
    root = copy_committed_set(tmp_path, SET)
    _rewrite(root, {**_probe(root), "pass": False})
    result = verify(root)
    assert any(p.startswith("correctness.json: pass False, but its comparisons and agreement flags give True")
               for p in result.records), result.records


def test_a_comparison_far_over_its_tolerance_marked_passing_is_named(tmp_path):
    root = copy_committed_set(tmp_path, SET)
    record = _probe(root)
    assert record["comparisons"][0]["criterion"] == "norm"
    record["comparisons"][0].update(rel_diff=106.0, norm_rel_diff=106.0)
    _rewrite(root, record)
    result = verify(root)
    assert any("comparison 1 (param/actor): pass True, but 106 against a tolerance of 0.001 fails" in p
               for p in result.records), result.records


@pytest.mark.parametrize("edit, says", [
    (lambda r: r["comparisons"][1].update(tolerance=1e9),
     "comparison 2 (param/critic): tolerance 1000000000.0, the code's float32 table gives 0.001"),
    # a gradient judged against the parameters' tolerance
    (lambda r: next(c for c in r["comparisons"] if c["tensor"].startswith("grad/")).update(tolerance=0.001),
     "comparison 5 (grad/critic): tolerance 0.001, the code's float32 table gives 0.0001"),
    # gradients are judged in bfloat16 too
    (lambda r: r.update(autocast_dtype="bfloat16") or next(
        c for c in r["comparisons"] if c["tensor"].startswith("grad/")).update(tolerance=None, judged=False),
     "comparison 5 (grad/critic): judged False with a tolerance of None, the code's bfloat16 table gives 0.05 "
     "(judged)"),
    (lambda r: r.update(rank_spread_max_abs={}), "rank_spread_max_abs: not an object of numbers"),
    (lambda r: r["comparisons"][0].update(rel_diff=0.0), "judges 0.0, but its criterion 'norm' names"),
    (lambda r: r.update(ranks_identical_after=True, rank_spread_max_abs={"actor": 0.5}),
     "ranks_identical_after True, but rank_spread_max_abs says False"),
    (lambda r: r.update({"pass": "yes"}), "not a probe record"),
    # a judged comparison with no tolerance: any difference passed
    (lambda r: r["comparisons"][0].update(tolerance=None, rel_diff=106.0, norm_rel_diff=106.0),
     "comparison 1 (param/actor): pass True, but 106 against a tolerance of 0.001 fails"),
    (lambda r: r["comparisons"][0].update(tolerance=None, rel_diff=106.0, norm_rel_diff=106.0),
     "comparison 1 (param/actor): tolerance None, the code's float32 table gives 0.001"),
    # the fields that tie the judged difference to the others removed
    (lambda r: [r["comparisons"][1].pop(k) for k in ("criterion", "max_rel_diff", "norm_rel_diff")],
     "neither 'max' nor 'norm'"),
    (lambda r: r["comparisons"][1].pop("max_rel_diff"), "must be numbers"),
    (lambda r: r.update(rank_spread_max_abs={"actor": "0.5"}), "rank_spread_max_abs: not an object of numbers"),
])
def test_a_verdict_its_numbers_do_not_give(edit, says):
    record = json.loads((REPO / "results" / SET / "correctness.json").read_text())
    edit(record)
    problems = probe_problems(record) + code_settings_problems(record)
    assert any(says in p for p in problems), problems
