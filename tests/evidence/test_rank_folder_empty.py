"""An EMPTY `tb/rank1` in a 1-rank run: the rank rule named it, but composing the page again
(its learning curves read every run's events) let the reader's error out, labelled as the
set's JSON structure, and the checks after it were skipped."""

from set_copies import current_copy

from sacscale.evidence.verify import verify

SET = "h200x1_shared_short"
RUN = "shared_r1_n1_pool7"


def test_an_empty_rank_folder_is_named_and_the_other_checks_run(tmp_path):
    root = current_copy(tmp_path, SET)
    (root / "runs" / RUN / "tb" / "rank1").mkdir()  # no file: nothing the manifest lists changes
    result = verify(root)
    empty = f"{root}/runs/{RUN}/tb/rank1: no event file (events.out.tfevents.*) in this directory"
    assert not result.structure, result.structure
    assert (f"{RUN}: the run holds 2 rank folder(s) (tb/rank0, tb/rank1), but train_meta.json world_size is 1: "
            "each rank writes its own events") in result.records, result.records
    assert f"{RUN}: cannot recompute: {empty}" in result.metrics, result.metrics
    assert (f"reports/{SET}: its page cannot be composed again from the evidence: a run's events cannot be read "
            f"({empty}): does not match the evidence") in result.derived, result.derived
