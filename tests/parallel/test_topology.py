"""The topology planner: the tools' text formats, and each rule of the matrix on the
recorded one-/two-H200 topologies, a seed-shaped 2x40-core SMT server and an 8-GPU
two-socket SMT server (tests/parallel/fixtures/topology/, each file says where it came from)."""

import json
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from cli_runs import one_line, sacscale
from paused_runs import finished, started_paused

from sacscale.cli import main
from sacscale.cpus import parse_cpu_list
from sacscale.parallel import topology
from sacscale.parallel.matrix import LEARNER_BOUND_ENVS, plan_matrix
from sacscale.parallel.topology import (
    Cpu,
    Gpu,
    Topology,
    TopologyError,
    parse_lscpu,
    parse_nvidia_topo,
    read_sysfs_cpus,
)

FIXTURES = Path(__file__).parent / "fixtures" / "topology"
MACHINES = ["h200x1", "h200x2", "seed_2x40_smt_2gpu", "eight_gpu_2x56_smt"]


def machine(name: str) -> Topology:
    return Topology(
        parse_lscpu((FIXTURES / f"{name}.lscpu").read_text()),
        parse_nvidia_topo((FIXTURES / f"{name}.topo").read_text()),
    )


# --- the tools' formats ------------------------------------------------------------------

def test_lscpu_recorded_outputs_parse_to_cpus_cores_and_nodes():
    two = parse_lscpu((FIXTURES / "h200x2.lscpu").read_text())
    assert [c.id for c in two] == list(range(32)) and {c.node for c in two} == {0}
    seed = {c.id: c for c in parse_lscpu((FIXTURES / "seed_2x40_smt_2gpu.lscpu").read_text())}
    assert len(seed) == 160
    assert (seed[0].socket, seed[0].core) == (seed[80].socket, seed[80].core)  # SMT siblings
    assert (seed[40].socket, seed[40].node, seed[120].core) == (1, 1, seed[40].core)


def test_lscpu_columns_by_header_offline_cpus_and_no_numa():
    text = "CORE CPU NODE SOCKET\n   0   0    0      0\n   -   1    -      -\n   1   2    1      0\n"
    cpus = parse_lscpu(text)
    assert [(c.id, c.core, c.node) for c in cpus] == [(0, 0, 0), (2, 1, 1)]  # CPU 1 offline
    no_numa = parse_lscpu("CPU CORE SOCKET\n  0    0      0\n  1    1      0\n")
    assert {c.node for c in no_numa} == {0}
    with pytest.raises(TopologyError, match="lacks column.*SOCKET.*lscpu -e=CPU,CORE,SOCKET,NODE"):
        parse_lscpu("CPU CORE\n  0    0\n")
    with pytest.raises(TopologyError, match="line 2 .* 3 fields, the header 4"):
        parse_lscpu("CPU CORE SOCKET NODE\n 0 0 0\n")


def test_nvidia_topo_with_and_without_escape_codes_and_with_nic_columns():
    two = parse_nvidia_topo((FIXTURES / "h200x2.topo").read_text())  # as printed: escape codes
    assert [(g.index, g.label, g.node) for g in two] == [(0, "GPU0", 0), (1, "GPU1", 0)]
    assert two[1].cpus == frozenset(range(32))
    one = parse_nvidia_topo((FIXTURES / "h200x1.topo").read_text())  # recorder stripped them
    assert [(g.index, g.node, len(g.cpus)) for g in one] == [(0, 0, 16)]
    eight = parse_nvidia_topo((FIXTURES / "eight_gpu_2x56_smt.topo").read_text())
    assert [g.node for g in eight] == [0, 0, 0, 0, 1, 1, 1, 1]  # NIC rows ignored
    assert eight[5].cpus == frozenset([*range(56, 112), *range(168, 224)])


def test_nvidia_topo_older_drivers_and_unknown_affinity():
    old = "\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tSYS\t0-7\nGPU1\tSYS\t X \t8-15\n\nLegend:\n"
    gpus = parse_nvidia_topo(old)
    assert [(g.node, min(g.cpus)) for g in gpus] == [(None, 0), (None, 8)]
    vm = "\tGPU0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\nGPU0\t X \tN/A\tN/A\t\tN/A\n"
    assert parse_nvidia_topo(vm) == [Gpu(index=0, label="GPU0", node=None, cpus=None)]
    assert parse_nvidia_topo("No devices were found\n") == []
    with pytest.raises(TopologyError, match="no header with a 'CPU Affinity' column"):
        parse_nvidia_topo("GPU 0: NVIDIA H200 (UUID: x)\n")


def test_sysfs_cpus_agree_with_lscpu(tmp_path):
    """A sysfs tree of the seed-shaped server gives what its lscpu listing gives."""
    expected = parse_lscpu((FIXTURES / "seed_2x40_smt_2gpu.lscpu").read_text())
    (tmp_path / "cpu").mkdir()
    (tmp_path / "cpu" / "online").write_text("0-159\n")
    for cpu in expected:
        topo = tmp_path / "cpu" / f"cpu{cpu.id}" / "topology"
        topo.mkdir(parents=True)
        (topo / "core_id").write_text(f"{cpu.core % 40}\n")  # sysfs numbers cores per socket
        (topo / "physical_package_id").write_text(f"{cpu.socket}\n")
    for node in (0, 1):
        (tmp_path / "node" / f"node{node}").mkdir(parents=True)
        lo = 40 * node
        (tmp_path / "node" / f"node{node}" / "cpulist").write_text(f"{lo}-{lo + 39},{lo + 80}-{lo + 119}\n")
    live = read_sysfs_cpus(tmp_path)
    assert [(c.id, c.socket, c.node) for c in live] == [(c.id, c.socket, c.node) for c in expected]
    gpus = parse_nvidia_topo((FIXTURES / "seed_2x40_smt_2gpu.topo").read_text())
    assert plan_matrix(Topology(live, gpus))["configs"] == plan_matrix(Topology(expected, gpus))["configs"]


def test_live_gpus_are_renumbered_under_cuda_visible_devices(monkeypatch):
    text = (FIXTURES / "eight_gpu_2x56_smt.topo").read_text()
    monkeypatch.setattr(topology.shutil, "which", lambda name: "/usr/bin/nvidia-smi")
    monkeypatch.setattr(topology.subprocess, "run",
                        lambda *a, **k: subprocess.CompletedProcess(a[0], 0, stdout=text, stderr=""))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "5,2")
    gpus, source = topology.live_gpus()
    assert [(g.index, g.label, g.node) for g in gpus] == [(0, "GPU5", 1), (1, "GPU2", 0)]
    assert "CUDA_VISIBLE_DEVICES=5,2" in source
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-1234")
    with pytest.raises(TopologyError, match="maps GPU indices only"):
        topology.live_gpus()
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert topology.live_gpus()[0] == []


# --- the rules, on every fixture ---------------------------------------------------------

def check_shared_rules(m: dict, shared: set[str], cpu: dict, node_of_gpu: dict) -> None:
    """Two ranks on one GPU: disjoint pools and learner cores on its node, pools of equal
    size, the one-rank baseline is rank 0's block, and the sync runs between graphs."""
    if not shared:
        return
    two = m["configs"]["n2_shared"]
    pools = [parse_cpu_list(p) for p in two["cpu_pools"]]
    learners = [parse_cpu_list(x) for x in two["learner_cpus"]]
    node = node_of_gpu[int(two["devices"].split(",")[0])]
    assert len(set(two["devices"].split(","))) == 1 and len(pools) == 2 and len(pools[0]) == len(pools[1])
    every = set().union(*pools, *learners)
    assert len(every) == sum(map(len, pools)) + sum(map(len, learners))  # nothing used twice
    assert {cpu[x].node for x in every} == {node}
    assert two["overrides"]["allreduce"] == "between-graphs"
    one = m["configs"][f"n1_pool{len(pools[0])}"]
    assert one["cpu_pools"] == two["cpu_pools"][:1] and one["learner_cpus"] == two["learner_cpus"][:1]


def check_rules(topo: Topology, m: dict, smt: bool) -> None:
    cpu = {c.id: c for c in topo.cpus}
    core_of = {c.id: (c.socket, c.core) for c in topo.cpus}
    threads = {}
    for c in topo.cpus:
        threads.setdefault(core_of[c.id], []).append(c.id)
    node_of_gpu = {g["index"]: g["node"] for g in m["gpus"]}
    gpus = len(topo.gpus)

    # one GPU: two ranks may share it (their own rules below), beside one rank of them
    shared = {n for n in m["configs"] if n.startswith("n2_shared") or n.startswith("n1_pool")} if gpus == 1 else set()
    check_shared_rules(m, shared, cpu, node_of_gpu)
    # names: n1_local, n2_pool, n4_pool, ..., n{G}_pool, then n1_total (more than one GPU)
    counts = [int(n[1:].split("_")[0]) for n in m["order"] if n != "n1_total" and n not in shared]
    assert m["order"][0] == "n1_local" and counts[-1] == gpus and counts == sorted(set(counts))
    assert all(k & (k - 1) == 0 for k in counts[:-1])
    assert ("n1_total" in m["order"]) == (gpus > 1)
    # beyond the order: the all-reduce placement controls, n2_pool's GPUs and pools with the
    # all-reduce in the graph or between graph segments, collector- and learner-bound
    controls = {"n2_pool_between", "n2_pool_lb", "n2_pool_lb_between"} if gpus > 1 else set()
    assert set(m["configs"]) == set(m["order"]) | controls | shared | ({"n2_pool_2x"} if gpus > 1 else set())
    if gpus > 1:  # and the time-to-quality control: n1_local's updates per env step on two GPUs
        c, two = m["configs"]["n2_pool_2x"], m["configs"]["n2_pool"]
        assert (c["devices"], c["cpu_pools"]) == (two["devices"], two["cpu_pools"])
        assert c["overrides"] == {"num_critic_updates": 16, "num_actor_updates": 4}
        assert m["pairs"][-1] == ["n1_local", "n2_pool_2x"]
    for name in controls:
        c, two = m["configs"][name], m["configs"]["n2_pool"]
        assert ((c["devices"], c["cpu_pools"], c["learner_cpus"])
                == (two["devices"], two["cpu_pools"], two["learner_cpus"]))
        assert c["overrides"] == {"allreduce": "between-graphs" if name.endswith("_between") else "in-graph"}
        assert c.get("num_envs") == (LEARNER_BOUND_ENVS if "_lb" in name else None)
    if gpus > 1:
        assert m["pairs"][-3:-1] == [["n2_pool", "n2_pool_between"], ["n2_pool_lb", "n2_pool_lb_between"]]

    block = {}  # GPU -> (pool, learner): the same in every configuration
    for name in (n for n in m["order"] if n not in shared):
        c = m["configs"][name]
        devices = [int(d) for d in c["devices"].split(",")]
        pools = [parse_cpu_list(p) for p in c["cpu_pools"]]
        learners = [parse_cpu_list(x) for x in c["learner_cpus"]]
        assert len(devices) == len(pools) == len(learners) == len(set(devices)) and c["description"]
        assert sum(len(p) for p in pools) == len(set().union(*pools))  # pools of a config disjoint
        every_pool = set().union(*pools)
        for dev, pool, learner in zip(devices, pools, learners):
            node = node_of_gpu[dev]
            if name != "n1_total":
                assert {cpu[x].node for x in pool} == {node}, (name, dev)  # pool on its GPU's node
                assert block.setdefault(dev, (pool, learner)) == (pool, learner), (name, dev)
            assert {cpu[x].node for x in learner} == {node}                # learner core on that node
            assert not set(learner) & every_pool                           # outside every pool
            assert len({core_of[x] for x in learner}) == 1                 # one physical core
            pool_cores = Counter(core_of[x] for x in pool)
            if smt:
                assert all(n == len(threads[k]) for k, n in pool_cores.items())  # whole cores
            else:
                assert set(pool_cores.values()) == {1}                     # one thread per core
                assert all(x == min(threads[core_of[x]]) for x in pool)    # siblings left out
            assert not {core_of[x] for x in learner} & set(pool_cores)
        if name != "n1_total":
            assert len({len(p) for p in pools}) == 1 and len(pools[0]) == m["pool_threads"] >= 2
            # GPUs spread over the NUMA nodes as evenly as possible
            per_node = Counter(node_of_gpu[d] for d in devices)
            have = Counter(node_of_gpu.values())
            spare = [n for n in have if per_node[n] < have[n]]
            assert not spare or max(per_node.values()) - min(per_node.get(n, 0) for n in spare) <= 1
    # no learner core of any GPU is in any pool of the largest configuration
    all_pools = {x for pool, _ in block.values() for x in pool}
    assert not {x for _, learner in block.values() for x in learner} & all_pools
    if gpus > 1:
        total = m["configs"]["n1_total"]
        assert len(total["cpu_pools"]) == 1 and total["devices"] == m["configs"]["n1_local"]["devices"]
        assert set(parse_cpu_list(total["cpu_pools"][0])) == all_pools  # all of the largest config's
        assert ["n1_total", m["order"][-2]] in m["pairs"]


@pytest.mark.parametrize("smt", [False, True], ids=["cores", "smt"])
@pytest.mark.parametrize("name", MACHINES)
def test_every_rule_holds_on_every_fixture(name, smt):
    topo = machine(name)
    check_rules(topo, plan_matrix(topo, smt=smt), smt)


def test_two_h200_matrix_is_the_hand_written_preset():
    m = plan_matrix(machine("h200x2"))
    assert m["order"] == ["n1_local", "n2_pool", "n1_total"]
    assert m["configs"]["n1_local"]["cpu_pools"] == ["1-15"]
    assert m["configs"]["n2_pool"]["cpu_pools"] == ["1-15", "17-31"]
    assert m["configs"]["n2_pool"]["learner_cpus"] == ["0", "16"]
    assert m["configs"]["n1_total"]["cpu_pools"] == ["1-15,17-31"]


def test_one_h200_matrix_shares_the_gpu_between_two_ranks():
    m = plan_matrix(machine("h200x1"))
    assert m["order"] == ["n1_local", "n1_pool7", "n2_shared"] and "no n1_total" in m["reason"]
    assert m["pairs"] == [["n1_pool7", "n2_shared"], ["n1_pool7", "n2_shared_nosync"], ["n1_pool14", "n2_shared"]]
    assert m["configs"]["n1_local"] == {
        "devices": "0", "cpu_pools": ["1-15"], "learner_cpus": ["0"],
        "description": "1 GPU, a 15-thread pool on its NUMA node (node 0)",
    }
    shared = m["configs"]["n2_shared"]
    assert shared["devices"] == "0,0" and shared["cpu_pools"] == ["1-7", "9-15"]
    assert shared["overrides"] == {"allreduce": "between-graphs", "learner-cpu-ids": "0;8"}
    assert "sharing GPU 0" in shared["description"] and "not two GPUs" in shared["description"]
    assert m["configs"]["n2_shared_nosync"]["overrides"]["grad-sync"] == "off"
    assert m["configs"]["n1_pool7"]["cpu_pools"] == ["1-7"]
    assert m["configs"]["n1_pool7"]["overrides"] == {"allreduce": "between-graphs", "learner-cpu-ids": "0"}
    assert m["configs"]["n1_pool14"]["cpu_pools"] == ["1-7,9-15"]


@pytest.mark.parametrize("cores, pools, learners", [
    (8, ["1-3", "5-7"], "0;4"),          # 8 CPUs: 3-thread pools
    (64, ["1-31", "33-63"], "0;32"),     # 64 CPUs: 31-thread pools
    (5, None, None),                     # too few for two learner cores and two 2-thread pools
])
def test_one_gpu_planner_splits_any_node_into_two_shared_ranks(cores, pools, learners):
    cpus = [Cpu(id=i, core=i, socket=0, node=0) for i in range(cores)]
    m = plan_matrix(Topology(cpus, [Gpu(index=0, label="GPU0", node=0, cpus=None)]))
    if pools is None:
        assert "n2_shared" not in m["configs"] and m["order"] == ["n1_local"]
        return
    assert m["configs"]["n2_shared"]["cpu_pools"] == pools
    assert m["configs"]["n2_shared"]["overrides"]["learner-cpu-ids"] == learners


def test_seed_server_gets_a_pool_per_socket_and_the_64_core_control():
    m = plan_matrix(machine("seed_2x40_smt_2gpu"), pool_cores=32)
    assert m["configs"]["n2_pool"]["cpu_pools"] == ["1-32", "41-72"]   # the seed: 8-39, 48-79
    assert m["configs"]["n2_pool"]["learner_cpus"] == ["0", "40"]
    assert len(parse_cpu_list(m["configs"]["n1_total"]["cpu_pools"][0])) == 64
    full = plan_matrix(machine("seed_2x40_smt_2gpu"))
    assert full["pool_threads"] == 39
    smt = plan_matrix(machine("seed_2x40_smt_2gpu"), smt=True)
    assert smt["configs"]["n1_local"]["cpu_pools"] == ["1-39,81-119"] and smt["pool_threads"] == 78
    assert smt["configs"]["n1_local"]["learner_cpus"] == ["0,80"]


def test_eight_gpu_server_spreads_ranks_over_both_sockets():
    m = plan_matrix(machine("eight_gpu_2x56_smt"))
    assert m["order"] == ["n1_local", "n2_pool", "n4_pool", "n8_pool", "n1_total"]
    assert [m["configs"][n]["devices"] for n in m["order"]] == ["0", "0,4", "0,1,4,5", "0,1,2,3,4,5,6,7", "0"]
    assert m["pool_threads"] == 13  # (56 cores - 4 learner cores) // 4 GPUs per socket
    assert m["configs"]["n2_pool"]["cpu_pools"] == ["1-13", "57-69"]
    assert m["pairs"][:4] == [["n1_local", "n2_pool"], ["n1_local", "n4_pool"], ["n1_local", "n8_pool"],
                              ["n1_total", "n8_pool"]]


def test_uneven_gpus_per_node_size_pools_by_the_fullest_node():
    """3 GPUs: two on node 0, one on node 1; n2 takes one per node, pools fit node 0's two."""
    cpus = parse_lscpu((FIXTURES / "seed_2x40_smt_2gpu.lscpu").read_text())
    gpus = [Gpu(0, "GPU0", 0, None), Gpu(1, "GPU1", 0, None), Gpu(2, "GPU2", 1, None)]
    m = plan_matrix(Topology(cpus, gpus))
    assert m["order"] == ["n1_local", "n2_pool", "n3_pool", "n1_total"]
    assert m["configs"]["n2_pool"]["devices"] == "0,2" and m["pool_threads"] == 19  # (40 - 2) // 2
    check_rules(Topology(cpus, gpus), m, smt=False)


def test_gpu_node_from_cpu_affinity_when_numa_affinity_is_absent():
    cpus = parse_lscpu((FIXTURES / "seed_2x40_smt_2gpu.lscpu").read_text())
    old = "\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tSYS\t40-79,120-159\nGPU1\tSYS\t X \t0-39,80-119\n"
    m = plan_matrix(Topology(cpus, parse_nvidia_topo(old)))
    assert m["configs"]["n1_local"]["cpu_pools"] == ["41-79"]  # GPU0 sits on node 1
    assert [g["node"] for g in m["gpus"]] == [1, 0]


def test_cpus_outside_the_affinity_mask_are_left_out():
    topo = machine("h200x2")
    m = plan_matrix(topo, allowed=set(range(4, 32)))
    assert m["configs"]["n2_pool"]["learner_cpus"] == ["4", "18"]
    assert m["configs"]["n2_pool"]["cpu_pools"] == ["5-17", "19-31"]


# --- errors name what is missing -----------------------------------------------------------

def small_machine(cpus: int, gpus: int, smt: int = 1) -> Topology:
    cores = cpus // smt
    rows = "".join(f"{c} {c % cores} 0 0\n" for c in range(cpus))
    return Topology(parse_lscpu("CPU CORE SOCKET NODE\n" + rows),
                    [Gpu(i, f"GPU{i}", 0, None) for i in range(gpus)])


def test_no_gpu_is_an_error():
    with pytest.raises(TopologyError, match="^no GPU"):
        plan_matrix(small_machine(16, 0))


def test_too_few_cores_for_two_threads_a_rank():
    plan_matrix(small_machine(6, 2))  # 2 x (learner + 2): just enough
    with pytest.raises(TopologyError,
                       match=r"too few cores: NUMA node 0 has 5 usable physical core\(s\) for 2 GPU\(s\) "
                             r"\(GPU0, GPU1\); each rank needs 1 learner core and 2 simulation threads"):
        plan_matrix(small_machine(5, 2))


def test_too_few_cores_for_hundreds_of_gpus_names_the_first_few():
    """A recorded topology of 300 GPUs listed every label: a refusal of kilobytes."""
    with pytest.raises(TopologyError) as refused:
        plan_matrix(small_machine(16, 300))
    assert "(GPU0, GPU1, GPU2, GPU3, GPU4, GPU5, GPU6, GPU7, ... (300 in all))" in str(refused.value)
    assert len(str(refused.value)) < 300


def test_smt_siblings_count_only_with_the_option():
    two_cores = small_machine(4, 1, smt=2)  # 2 physical cores, 2 threads each
    with pytest.raises(TopologyError, match="too few cores.*SMT siblings excluded, --smt uses them"):
        plan_matrix(two_cores)
    m = plan_matrix(two_cores, smt=True)
    assert m["configs"]["n1_local"]["cpu_pools"] == ["1,3"] and m["configs"]["n1_local"]["learner_cpus"] == ["0,2"]


def test_pool_cores_beyond_the_node_and_unplaceable_gpus_are_errors():
    with pytest.raises(TopologyError, match="--pool-cores 16: NUMA node 0 allows at most 15 cores per pool"):
        plan_matrix(machine("h200x1"), pool_cores=16)
    with pytest.raises(TopologyError, match="--pool-cores 1: gives pools of 1 simulation thread"):
        plan_matrix(machine("h200x1"), pool_cores=1)
    cpus = parse_lscpu((FIXTURES / "seed_2x40_smt_2gpu.lscpu").read_text())
    with pytest.raises(TopologyError, match="GPU0: nvidia-smi topo -m gives no NUMA Affinity"):
        plan_matrix(Topology(cpus, [Gpu(0, "GPU0", None, None)]))
    # a GPU whose node lies outside the affinity mask is not moved to another node
    seed = machine("seed_2x40_smt_2gpu")
    with pytest.raises(TopologyError, match="GPU1: its NUMA node 1 has no CPU this process may use"):
        plan_matrix(seed, allowed=set(range(40)))
    old = "\tGPU0\tCPU Affinity\nGPU0\t X \t40-79\n"
    with pytest.raises(TopologyError, match="GPU0: no CPU of its CPU Affinity 40-79 is one this process may use"):
        plan_matrix(Topology(seed.cpus, parse_nvidia_topo(old)), allowed=set(range(40)))


# --- the command ----------------------------------------------------------------------------

def test_plan_matrix_command_writes_the_matrix(tmp_path, capsys):
    out = tmp_path / "matrix.json"
    rc = main(["plan-matrix", "--lscpu", str(FIXTURES / "eight_gpu_2x56_smt.lscpu"),
               "--nvidia-smi-topo", str(FIXTURES / "eight_gpu_2x56_smt.topo"), "--output", str(out)])
    assert rc == 0
    m = json.loads(out.read_text())
    assert m["order"][-1] == "n1_total" and m["configs"]["n8_pool"]["devices"] == "0,1,2,3,4,5,6,7"
    assert "eight_gpu_2x56_smt.lscpu" in m["source"] and "n8_pool" in capsys.readouterr().err


def test_plan_matrix_command_fails_naming_the_problem(tmp_path, capsys):
    lscpu = tmp_path / "small.lscpu"
    lscpu.write_text("CPU CORE SOCKET NODE\n  0    0      0    0\n  1    1      0    0\n")
    rc = main(["plan-matrix", "--lscpu", str(lscpu), "--nvidia-smi-topo", str(FIXTURES / "h200x1.topo")])
    assert rc == 1
    assert "sacscale plan-matrix: error: too few cores: NUMA node 0 has 2 usable" in capsys.readouterr().err


def test_the_live_one_h200_output_plans_what_the_machine_planned():
    """`nvidia-smi topo -m` as it printed on the lent H200 (escape codes and all), with the
    recorded CPUs: the same matrix `sacscale plan-matrix` wrote there from sysfs."""
    topo = Topology(parse_lscpu((FIXTURES / "h200x1.lscpu").read_text()),
                    parse_nvidia_topo((FIXTURES / "h200x1_live.topo").read_text()))
    live = json.loads((FIXTURES / "h200x1_live.matrix.json").read_text())
    planned = plan_matrix(topo)
    # recorded before the planner added the shared-GPU configurations: those come after
    assert {k: planned["configs"][k] for k in live["configs"]} == live["configs"]
    assert planned["order"][:len(live["order"])] == live["order"]


def test_a_pool_cores_the_node_could_exceed_names_the_option_not_the_node():
    """One core per pool gives one simulation thread where the node has 15 per pool to give:
    the option is the shortage, not the node's core count."""
    with pytest.raises(TopologyError) as info:
        plan_matrix(machine("h200x1"), pool_cores=1)
    assert str(info.value) == ("--pool-cores 1: gives pools of 1 simulation thread(s), and each rank needs at least 2 "
                               "(one per physical core; SMT siblings excluded, --smt uses them); ask for more cores "
                               "per pool or pass --smt")


@pytest.mark.parametrize("value,problem", [("0", "0: a pool needs at least 1 core"),
                                           ("-3", "-3: a pool needs at least 1 core"),
                                           ("x", "'x' is not a whole number of cores")])
def test_a_pool_cores_below_one_is_a_usage_error(capsys, value, problem):
    with pytest.raises(SystemExit) as info:
        main(["plan-matrix", "--lscpu", str(FIXTURES / "h200x1.lscpu"), "--nvidia-smi-topo",
              str(FIXTURES / "h200x1.topo"), "--pool-cores", value])
    assert info.value.code == 2
    assert f"argument --pool-cores: {problem}" in capsys.readouterr().err


def test_plan_matrix_output_is_under_the_cli_output_rules(tmp_path, capsys):
    """A folder as --output was refused only when written; two at once into one file both
    exited 0, the last one's plan left. Now the folder is refused before anything is read,
    and a second writer at once (evidence/paused_sacscale.py holds the first) is refused."""
    recorded = ["--lscpu", str(FIXTURES / "h200x1.lscpu"), "--nvidia-smi-topo", str(FIXTURES / "h200x1.topo")]
    with pytest.raises(SystemExit) as refused:
        main(["plan-matrix", *recorded, "--output", str(tmp_path)])
    assert refused.value.code == 2
    assert f"error: --output {tmp_path}: is a folder, not a file" in capsys.readouterr().err
    out = tmp_path / "m.json"
    first = started_paused(tmp_path, "sacscale.commands.plan_matrix:plan_matrix", "plan-matrix", *recorded,
                           "--output", out)
    second = sacscale("plan-matrix", *recorded, "--smt", "--output", out)
    one_line(second, f"--output {out}: another sacscale command is writing this output (pid {first.pid} holds ")
    done = finished(tmp_path, first)
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text())["order"] and not list(tmp_path.glob(".*.lock"))


@pytest.mark.parametrize("value,problem", [
    ("16", "--pool-cores 16: NUMA node 0 allows at most 15 cores per pool"),
    ("99999999999999999999", "--pool-cores 99999999999999999999: NUMA node 0 allows at most 15 cores per pool"),
    ("1", "--pool-cores 1: gives pools of 1 simulation thread(s)"),
], ids=["over_the_node", "huge", "one_thread"])
def test_a_pool_cores_the_topology_cannot_give_is_a_usage_error(capsys, value, problem):
    """A value over what the node allows is bad input (exit 2), as one below 1 is, not a
    topology that cannot be read (exit 1)."""
    rc = main(["plan-matrix", "--lscpu", str(FIXTURES / "h200x1.lscpu"), "--nvidia-smi-topo",
               str(FIXTURES / "h200x1.topo"), "--pool-cores", value])
    err = capsys.readouterr().err
    assert rc == 2
    assert err.startswith(f"sacscale plan-matrix: error: {problem}") and err.count("\n") == 1
