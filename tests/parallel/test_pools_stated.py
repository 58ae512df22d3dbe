"""What an explicit CPU spec pins, read without this host's CPUs (verify reads a run made
on another host), is what the trainer resolves on a host that has them."""

import os

from sacscale.parallel.pools import (resolve_learner_cpus, resolve_pools, stated_learner_cpus,
                                     stated_pools)


def test_a_stated_spec_is_what_the_trainer_resolves():
    cpus = sorted(os.sched_getaffinity(0))
    spec = f"{cpus[0]}" if len(cpus) < 2 else f"{cpus[0]};{cpus[-1]}"
    ranks = len(spec.split(";"))
    assert stated_pools(spec) == resolve_pools(spec, ranks)
    assert stated_learner_cpus("", ranks) == resolve_learner_cpus("", resolve_pools(spec, ranks).pools)


def test_a_spec_of_cpus_this_host_lacks_is_still_read():
    assert stated_pools(" 1-7;9-15 ").as_dict() == {"pools": [[1, 2, 3, 4, 5, 6, 7], [9, 10, 11, 12, 13, 14, 15]],
                                                    "learner_cpus": [], "how": "explicit: 1-7;9-15"}
    assert stated_learner_cpus("0;4096", 2) == [[0], [4096]]
    assert stated_pools("auto") is None and stated_learner_cpus("auto", 2) is None
