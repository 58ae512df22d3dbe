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


EIGHT_GPUS = [{"index": i, "node": i // 4} for i in range(8)]
TWO_NODES = {"0": "0-55", "1": "56-111"}
REDO = "correct the file or record it again (`sacscale plan-matrix --output FILE`)"


@pytest.mark.parametrize(("matrix", "says"), [
    ({"configs": {"n2_pool": {"devices": "0,9", "cpu_pools": "0-7;56-63"}}, "gpus": EIGHT_GPUS, "nodes": TWO_NODES},
     "configs.n2_pool.devices: GPU 9 is not in the matrix's gpus (it lists GPUs 0-7), so its pool's NUMA node "
     "cannot be judged"),
    ({"configs": {"n1": {"devices": " 12", "cpu_pools": ["0-7"]}}, "gpus": EIGHT_GPUS},
     "configs.n1.devices: GPU 12 is not in the matrix's gpus (it lists GPUs 0-7), so its pool's NUMA node "
     "cannot be judged"),
    ({"gpus": [*EIGHT_GPUS[:4], {"index": 4, "node": 5}], "nodes": TWO_NODES},
     "gpus[4].node: NUMA node 5 is not in the matrix's nodes (it lists nodes 0-1), so the CPUs of GPU 4's pools "
     "cannot be judged"),
], ids=["device_off_gpus", "device_off_gpus_without_nodes", "gpu_node_off_nodes"])
def test_a_gpu_the_topology_does_not_place_is_named(matrix, says):
    """The planner judges each pool by its GPU's node: a configuration's GPU that `gpus` does
    not list, or a GPU on a node `nodes` does not list, was a pool it skipped in silence."""
    with pytest.raises(TopologyError) as refused:
        check_matrix_topology(matrix)
    assert str(refused.value) == f"planner: {says}; {REDO}"


@pytest.mark.parametrize("matrix", [
    {"configs": {"n2": {"devices": "0,7", "cpu_pools": "0-7;56-63"}}, "gpus": EIGHT_GPUS, "nodes": TWO_NODES},
    {"configs": {"n2": {"devices": "0,9", "cpu_pools": "0-7;56-63"}}},  # no gpus: topology unknown
    {"gpus": [{"index": 0, "node": 5}]},  # no nodes: unknown
    {"configs": {"n2": {"devices": "cuda:0", "cpu_pools": "0-7"}}, "gpus": EIGHT_GPUS},  # named when run
], ids=["placed", "no_gpus", "no_nodes", "devices_not_a_gpu_list"])
def test_gpus_the_topology_places_or_cannot_know_pass(matrix):
    check_matrix_topology(matrix)
