"""A recorded matrix's pool_threads (each GPU's pool, in CPUs) is bounded by what the file
holds: the largest pool of its configurations, the largest NUMA node, else a CPU list's
reach. 10**30 threads over pools of 1 CPU was taken."""

import pytest

from sacscale.parallel.matrix_shape import check_matrix_topology
from sacscale.parallel.topology import TopologyError

ONE_CPU_POOLS = {"n1": {"devices": "0", "cpu_pools": ["1"]}, "n2": {"devices": "0,1", "cpu_pools": "2;3"}}


@pytest.mark.parametrize(("matrix", "says"), [
    ({"configs": ONE_CPU_POOLS, "pool_threads": 10**30},
     "pool_threads: 1000000000000000000000000000000 is not a whole number of threads from 1 to 1, the CPUs of the "
     "largest pool of configs"),
    ({"configs": ONE_CPU_POOLS, "nodes": {"0": "0-15"}, "pool_threads": 2},
     "pool_threads: 2 is not a whole number of threads from 1 to 1, the CPUs of the largest pool of configs"),
    ({"nodes": {"0": "0-7", "1": "8-11"}, "pool_threads": 9},
     "pool_threads: 9 is not a whole number of threads from 1 to 8, the CPUs of the largest NUMA node of nodes"),
    ({"configs": {"n1": {"devices": "0", "cpu_pools": 7}}, "pool_threads": 8193},
     "pool_threads: 8193 is not a whole number of threads from 1 to 8192, the CPUs a CPU list can name"),
], ids=["pools_of_one_cpu", "pools_below_the_node", "node", "no_pool_nor_node"])
def test_pool_threads_past_the_cpus_the_file_holds_is_named(matrix, says):
    with pytest.raises(TopologyError) as refused:
        check_matrix_topology(matrix)
    assert str(refused.value) == (f"planner: {says}; correct the file or record it again "
                                  "(`sacscale plan-matrix --output FILE`)")


def test_pool_threads_within_the_pools_passes():
    check_matrix_topology({"configs": ONE_CPU_POOLS, "nodes": {"0": "0-3"}, "pool_threads": 1})
