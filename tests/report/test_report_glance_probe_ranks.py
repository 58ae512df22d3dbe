"""The page's first line says when the correctness probe ran fewer ranks than the set's
runs train. Before, a one-rank probe (`probe: {devices: cpu}`) for a set whose `n2_cpu` trains
two ranks gave "the correctness probe passed" at a glance, while the Verdict line said "of
one rank only: ... no gradient sync between ranks was tested"."""

import pytest

from sacscale.report.verdict import at_a_glance


def _summary(*sizes: int) -> dict:
    return {"configs": {f"n{w}_cpu": {"devices": ",".join(["cpu"] * w), "world_size": w} for w in sizes},
            "comparisons": []}


def test_a_one_rank_probe_of_a_two_rank_set_says_one_rank_only():
    line = at_a_glance(_summary(1, 2), [{}] * 2, {"pass": True, "world_size": 1})
    assert ("The pipeline ran (2 runs) and the correctness probe passed for one rank only (the runs train up to 2 "
            "ranks); the throughput") in line


def test_a_two_rank_probe_of_a_four_rank_set_names_both():
    line = at_a_glance(_summary(1, 4), [{}] * 2, {"pass": True, "world_size": 2})
    assert "the correctness probe passed for 2 ranks only (the runs train up to 4 ranks)" in line


@pytest.mark.parametrize("sizes, probe", [
    ((1,), {"pass": True, "world_size": 1}),  # a one-rank set: the probe is as wide as its runs
    ((1, 2), {"pass": True, "world_size": 2}),
    ((1, 2), {"pass": True}),  # an older probe that recorded no world size: not guessed
])
def test_a_probe_as_wide_as_the_runs_just_passed(sizes, probe):
    line = at_a_glance(_summary(*sizes), [{}] * 2, probe)
    assert "the correctness probe passed;" in line


def test_a_failed_probe_is_said_whatever_its_width():
    assert "the correctness probe FAILED" in at_a_glance(_summary(1, 2), [{}] * 2, {"pass": False, "world_size": 1})


def test_the_earlier_page_formats_keep_their_words():
    """A set that recorded page format 2 keeps its page compared as that format wrote it."""
    line = at_a_glance(_summary(1, 2), [{}] * 2, {"pass": True, "world_size": 1}, page_format=2)
    assert "and the correctness probe passed; the throughput" in line
