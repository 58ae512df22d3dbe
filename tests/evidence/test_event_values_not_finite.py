"""A non-finite measured value in a run's events (a last `Episode/return` of +inf) is named
by verify: the recomputed `final_episode_return` was null, as stored, and the set passed."""

from event_times import event_file, revalued
from set_copies import copy_committed_set, remake_manifest

from sacscale.evidence.verify import verify

SET = "h200x1_shared_short"
RUN = "shared_r1_n1_pool7"


def test_an_infinite_episode_return_is_named_by_verify(tmp_path):
    root = copy_committed_set(tmp_path, SET)
    path = event_file(root / "runs" / RUN)
    revalued(path, "Episode/return", lambda step, value: float("inf") if step == 300 else value)
    remake_manifest(root)
    result = verify(root)
    named = (f"{RUN}: cannot recompute: {path}: step 300 Episode/return: value inf (the trainer never logs this "
             "tag non-finite: it leaves a NaN unwritten and stops on a non-finite loss)")
    assert named in result.metrics, result.metrics
    assert not result.structure, result.structure
