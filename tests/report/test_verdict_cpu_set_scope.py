"""A CPU set's Verdict said the claim was not tested because "its ranks share one GPU": two
CPU ranks (devices 'cpu,cpu') were taken for ranks sharing a GPU. Page format 3 says they are
CPU ranks; formats 1 and 2 keep their words, so the sets that recorded them stay compared."""

from sacscale.report.verdict import verdict_section

SUMMARY = {"configs": {"n1_cpu": {"devices": "cpu", "world_size": 1},
                       "n2_cpu": {"devices": "cpu,cpu", "world_size": 2}},
           "comparisons": [], "order": ["n1_cpu", "n2_cpu"]}


def _claim(page_format: int) -> str:
    blocks = verdict_section(SUMMARY, [{}, {}], {"preset": "cpu"}, None, None, page_format=page_format)
    return next(item for block in blocks for item in getattr(block, "items", []) if item.startswith("Claim"))


def test_a_cpu_sets_claim_line_says_cpu_ranks():
    claim = _claim(3)
    assert claim.startswith("Claim, from the seed, not tested by this set (CPU ranks, not GPUs): ")
    assert "GPU:" not in claim and "share one GPU" not in claim


def test_the_earlier_formats_keep_their_words():
    assert _claim(2).startswith("Claim, from the seed, not tested by this set (its ranks share one GPU: ")


def test_ranks_sharing_a_gpu_are_still_said():
    shared = {**SUMMARY, "configs": {"n1": {"devices": "0", "world_size": 1},
                                     "n2_shared": {"devices": "0,0", "world_size": 2}}, "order": ["n1", "n2_shared"]}
    blocks = verdict_section(shared, [{}, {}], {"preset": "x"}, None, None)
    claim = next(item for block in blocks for item in getattr(block, "items", []) if item.startswith("Claim"))
    assert "(its ranks share one GPU: " in claim
