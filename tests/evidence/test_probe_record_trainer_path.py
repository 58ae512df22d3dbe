"""verify derives the probe's verdict from everything the probe command ANDs into it: a
probe that compared nothing, a trainer path whose own verdict its numbers and checks do
not give, and a top-level pass over a failed trainer path passed."""

import pytest
from set_copies import records_after_edit


SET = "h200x1_shared_short"


def _verify_after(tmp_path, edit):
    return records_after_edit(tmp_path, "correctness.json", edit, SET)


def _far_over(record):
    t = record["trainer_path"]
    t["checks"]["sync_within_tolerance"] = False
    c = t["comparisons"][0]
    c.update(max_rel_diff=0.5, rel_diff=0.5, max_abs_diff=0.5 * c["scale"])


@pytest.mark.parametrize("edit, says", [
    (lambda r: r.update(comparisons=[]), "correctness.json: pass True, but its comparisons and agreement flags give "
                                         "False (it compared nothing)"),
    (_far_over, "correctness.json: trainer_path: comparison 1 (sync/critic): pass True, but 0.5 against a "
                "tolerance of 1e-05 fails"),
    (_far_over, "correctness.json: trainer_path: pass True, but its checks give False"),
    (lambda r: r["trainer_path"]["checks"].update(ranks_bit_identical_after=False),
     "correctness.json: trainer_path: checks.ranks_bit_identical_after False, but its numbers give True"),
    (lambda r: r["trainer_path"].update(comparisons=[]),
     "correctness.json: trainer_path: checks.sync_within_tolerance True, but its numbers give False"),
    (lambda r: r["trainer_path"].update({"pass": False}),
     "correctness.json: pass True, but its comparisons and agreement flags give True and its trainer_path.pass is "
     "False"),
])
def test_a_probe_verdict_its_parts_do_not_give_is_named(tmp_path, edit, says):
    records = _verify_after(tmp_path, edit)
    assert any(p.startswith(says) for p in records), records
