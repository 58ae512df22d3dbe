import os

import pytest

from sacscale.parallel.pools import PoolError, resolve_pools


def test_auto_on_small_machine_leaves_collectors_unpinned_or_splits_evenly():
    plan = resolve_pools("auto", 2)
    cpus = sorted(os.sched_getaffinity(0))
    assert len(plan.pools) == 2
    if len(cpus) < 6:
        assert plan.pools == [None, None] and "unpinned" in plan.how
    else:
        assert len(plan.pools[0]) == len(plan.pools[1]) >= 2
        assert not set(plan.pools[0]) & set(plan.pools[1])


def test_explicit_single_pool():
    cpu = sorted(os.sched_getaffinity(0))[0]
    assert resolve_pools(str(cpu), 1).pools == [[cpu]]


def test_pool_count_must_match_ranks():
    with pytest.raises(PoolError, match="2 CPU list.*for 1 rank"):
        resolve_pools("0;1", 1)


def test_overlapping_pools_are_named():
    cpus = sorted(os.sched_getaffinity(0))
    a = f"{cpus[0]}-{cpus[-1]}"
    with pytest.raises(PoolError, match="ranks 0 and 1 overlap"):
        resolve_pools(f"{a};{cpus[0]}", 2)


def test_nonexistent_cpus_are_named():
    with pytest.raises(PoolError, match="rank 1.*4097"):
        resolve_pools(f"{sorted(os.sched_getaffinity(0))[0]};4097", 2)


# --learner-cpu-ids

from sacscale.parallel.pools import resolve_learner_cpus  # noqa: E402

needs_two_cpus = pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 usable CPUs")


def test_learner_cpus_default_keeps_affinity():
    assert resolve_learner_cpus("", [[1], [2]]) == [None, None]
    assert resolve_learner_cpus(None, [None]) == [None]


@needs_two_cpus
def test_learner_cpus_auto_takes_the_cpus_no_pool_uses():
    cpus = sorted(os.sched_getaffinity(0))
    pool = cpus[1:]
    assert resolve_learner_cpus("auto", [pool]) == [[cpus[0]]]
    with pytest.raises(PoolError, match="0 CPU.*outside the collector pools"):
        resolve_learner_cpus("auto", [cpus])


@needs_two_cpus
def test_learner_cpus_explicit_checks():
    cpus = sorted(os.sched_getaffinity(0))
    assert resolve_learner_cpus(str(cpus[0]), [[cpus[1]]]) == [[cpus[0]]]
    with pytest.raises(PoolError, match=rf"rank 0: CPUs \[{cpus[1]}\] are in a collector pool"):
        resolve_learner_cpus(str(cpus[1]), [[cpus[1]]])
    with pytest.raises(PoolError, match="1 CPU list.*for 2 rank"):
        resolve_learner_cpus(str(cpus[0]), [None, None])
    with pytest.raises(PoolError, match="the learners of ranks 0 and 1 overlap on CPUs"):
        resolve_learner_cpus(f"{cpus[0]};{cpus[0]}", [None, None])
    with pytest.raises(PoolError, match="rank 1.*4097"):
        resolve_learner_cpus(f"{cpus[0]};4097", [None, None])
