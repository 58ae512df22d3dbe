"""Walk-arounds of `sacscale verify` of the sixth hardening pass: a sparse file of GBs in a
set made before the size budget (no budget to name it by: it was hashed, about 1 s a GB)."""

import time

from sacscale.evidence.verify import verify
from set_copies import copy_committed_set

PRE_BUDGET_SET = "h200x1"  # no evidence.json


def test_a_sparse_file_in_a_set_made_before_the_budget_is_named_not_hashed(tmp_path):
    work = copy_committed_set(tmp_path, PRE_BUDGET_SET)
    assert not (work / "evidence.json").exists()
    event = sorted((work / "runs").glob("*/tb/rank0/events*"))[0]
    with open(event, "r+b") as fh:
        fh.truncate(64 << 30)  # sparse: hashing it would read 64 GB
    t0 = time.monotonic()
    result = verify(work)
    assert time.monotonic() - t0 < 60
    rel = event.relative_to(work).as_posix()
    assert [p for p in result.problems() if p.startswith(f"scope: {rel}: 68,719,476,736 bytes with holes")], \
        result.problems()


def test_the_untouched_pre_budget_copy_verifies(tmp_path):
    assert verify(copy_committed_set(tmp_path, PRE_BUDGET_SET)).ok
