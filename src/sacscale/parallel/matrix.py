"""The run matrix of `sacscale plan-matrix`, planned from the machine's topology
(sacscale.parallel.topology), and the planned matrix as the pipeline's preset.

The matrix follows these rules (tests/parallel/test_topology.py checks each):

* a rank's simulation pool lies on its GPU's NUMA node (the topo's NUMA Affinity; its
  CPU Affinity when that is N/A), one physical core per simulation thread (SMT
  siblings left out unless `smt=True`, which gives a pool all threads of its cores);
* each rank's learner gets a core of that node outside every pool (reserved, listed in
  `learner_cpus`; the pipeline does not pin learners unless a run configuration asks);
* every GPU keeps one block (learner core, then its pool) in all configurations, sized
  for the largest one, so all pools have the same size (weak scaling, equal pools);
* `n1_local`, `n2_pool`, `n4_pool`, ... (powers of two, then the GPU count), GPUs picked
  round robin over the NUMA nodes so that ranks spread over them as evenly as possible;
* `n1_total`: one GPU with one pool of all simulation CPUs of the largest configuration
  (the seed's "64 cores in all" control); left out on a one-GPU machine, where it would
  be `n1_local` again;
* `TopologyError` names what is missing: no GPU, a GPU with no known NUMA node, or too
  few cores on a node for each rank's learner core and 2 simulation threads.
"""

from __future__ import annotations

from sacscale.cpus import format_cpu_list, parse_cpu_list
from sacscale.parallel.matrix_shape import check_matrix_shape, check_matrix_topology
from sacscale.parallel.topology import Cpu, Gpu, Topology, TopologyError


def _gpu_node(gpu: Gpu, node_cpus: dict[int, set[int]]) -> int:
    """The GPU's NUMA node: NUMA Affinity, else the one node its CPU Affinity lies on, else
    (no affinity known at all) the machine's only node."""
    if gpu.node is not None:
        if gpu.node not in node_cpus:
            raise TopologyError(f"{gpu.label}: its NUMA node {gpu.node} has no CPU this process may use")
        return gpu.node
    if gpu.cpus:
        nodes = [n for n, cpus in node_cpus.items() if gpu.cpus & cpus]
        if len(nodes) == 1:
            return nodes[0]
        if not nodes:
            raise TopologyError(
                f"{gpu.label}: no CPU of its CPU Affinity {format_cpu_list(gpu.cpus)} is one this process may use"
            )
    elif len(node_cpus) == 1:
        return next(iter(node_cpus))
    raise TopologyError(
        f"{gpu.label}: nvidia-smi topo -m gives no NUMA Affinity and no CPU Affinity within one "
        f"NUMA node (CPU Affinity {format_cpu_list(gpu.cpus) if gpu.cpus else 'N/A'}); "
        "the planner cannot tell which CPUs are local to it"
    )


def _physical_cores(cpus: list[Cpu], smt: bool) -> dict[int, list[list[int]]]:
    """node -> its physical cores in CPU order, each as the CPUs a simulation pool may use
    of it: the first thread only, or all threads with smt."""
    cores: dict[tuple[int, int], list[int]] = {}
    node_of = {}
    for cpu in cpus:
        cores.setdefault((cpu.socket, cpu.core), []).append(cpu.id)
        node_of[(cpu.socket, cpu.core)] = cpu.node
    by_node: dict[int, list[list[int]]] = {}
    for key, threads in sorted(cores.items(), key=lambda kv: min(kv[1])):
        threads = sorted(threads)
        by_node.setdefault(node_of[key], []).append(threads if smt else threads[:1])
    return by_node


def _rank_counts(total: int) -> list[int]:
    """1, 2, 4, ... below the GPU count, then the GPU count itself."""
    counts, k = [], 1
    while k < total:
        counts.append(k)
        k *= 2
    return counts + [total]


def _spread(gpus_by_node: dict[int, list[Gpu]]) -> list[Gpu]:
    """All GPUs, round robin over the NUMA nodes (starting at GPU 0's): the first k spread
    over them evenly."""
    queues = sorted((list(g) for g in gpus_by_node.values()), key=lambda q: q[0].index)
    order = []
    while any(queues):
        for q in queues:
            if q:
                order.append(q.pop(0))
    return order


LEARNER_BOUND_ENVS = 256  # per rank: a fraction of the physics, the same learner work per iteration


class PoolCoresError(TopologyError):
    """The --pool-cores value asked for is one the topology cannot give: the option is the
    problem (bad input), not the machine."""


def plan_matrix(topo: Topology, *, smt: bool = False, pool_cores: int | None = None,
                allowed: set[int] | None = None) -> dict:
    """The run matrix (the JSON `sacscale plan-matrix` writes) for this topology.

    allowed: CPUs this process may use (the live plan passes its affinity mask); others
    are left out. pool_cores: physical cores per pool (default: as many as the node with
    the fewest cores per GPU allows, so that every pool has the same size).
    """
    cpus = _usable_cpus(topo, allowed)
    node_cpus: dict[int, set[int]] = {}
    for c in cpus:
        node_cpus.setdefault(c.node, set()).add(c.id)
    cores = _physical_cores(cpus, smt)
    gpus_by_node: dict[int, list[Gpu]] = {}
    for gpu in sorted(topo.gpus, key=lambda g: g.index):
        gpus_by_node.setdefault(_gpu_node(gpu, node_cpus), []).append(gpu)

    size, tightest = _pool_size(cores, gpus_by_node, pool_cores)
    blocks = _blocks(cores, gpus_by_node, size)
    threads = min(len(pool) for _, pool in blocks.values())
    if threads < 2 and pool_cores is not None and _pool_size(cores, gpus_by_node, None)[0] > pool_cores:
        raise PoolCoresError(f"--pool-cores {pool_cores}: gives pools of {threads} simulation thread(s), and each "
                            f"rank needs at least 2 ({_counting(smt)}); ask for more cores per pool"
                            f"{'' if smt else ' or pass --smt'}")
    if threads < 2:
        raise _too_few_cores(cores, gpus_by_node[tightest], tightest, smt, pool_cores)
    # smt: equal pools even where a core has fewer threads (a CPU outside the affinity mask)
    blocks = {i: (learner, pool[:threads]) for i, (learner, pool) in blocks.items()}

    node_of = {g.index: n for n, gs in gpus_by_node.items() for g in gs}
    spread = _spread(gpus_by_node)
    configs, order, pairs = _scaling_configs(spread, blocks, node_of, threads)
    if len(spread) > 1:
        _add_controls(configs, order, pairs, blocks, first=spread[0].index)
    else:
        shared = _shared_gpu_configs(spread[0].index, cores.get(node_of[spread[0].index], []))
        if shared:
            configs.update(shared["configs"])
            order += shared["order"]
            pairs += shared["pairs"]
    return {
        "configs": configs,
        "order": order,
        "pairs": pairs,
        "reason": _reason(spread, gpus_by_node, cores, threads, smt, pool_cores),
        "gpus": [{"index": g.index, "label": g.label, "node": node_of[g.index]}
                 for g in sorted(spread, key=lambda g: g.index)],
        "nodes": {str(n): format_cpu_list(c) for n, c in sorted(node_cpus.items())},
        "smt": smt,
        "pool_threads": threads,
    }


def _usable_cpus(topo: Topology, allowed: set[int] | None) -> list[Cpu]:
    """The topology's CPUs this process may use; TopologyError without a GPU or a CPU."""
    cpus = [c for c in topo.cpus if allowed is None or c.id in allowed]
    if not topo.gpus:
        raise TopologyError("no GPU: the nvidia-smi topo -m matrix lists none")
    if not cpus:
        raise TopologyError("no CPU: the lscpu listing has none this process may use")
    return cpus


def _pool_size(cores: dict[int, list[list[int]]], gpus_by_node: dict[int, list[Gpu]],
               pool_cores: int | None) -> tuple[int, int]:
    """(cores per pool, the NUMA node that bounds it): each node must hold, for each of its
    GPUs, a learner core and a pool; `pool_cores` may ask for fewer."""
    fit = {node: (len(cores.get(node, [])) - len(gpus)) // len(gpus) for node, gpus in gpus_by_node.items()}
    tightest = min(fit, key=lambda n: (fit[n], n))
    size = fit[tightest]
    if pool_cores is not None:
        if pool_cores < 1:
            raise PoolCoresError(f"--pool-cores {pool_cores}: must be >= 1")
        if pool_cores > size >= 1:
            raise PoolCoresError(f"--pool-cores {pool_cores}: NUMA node {tightest} allows at most {size} cores "
                                 "per pool")
        size = min(size, pool_cores)
    return size, tightest


def _blocks(cores: dict[int, list[list[int]]], gpus_by_node: dict[int, list[Gpu]],
            size: int) -> dict[int, tuple[list[int], list[int]]]:
    """{GPU index: (its learner core's CPUs, its pool's CPUs)}: one block per GPU, on its
    node, kept in every configuration."""
    blocks: dict[int, tuple[list[int], list[int]]] = {}
    for node, gpus in gpus_by_node.items():
        node_cores = cores.get(node, [])
        for j, gpu in enumerate(gpus):
            start = j * (size + 1)
            learner = node_cores[start] if start < len(node_cores) else []
            pool = [cpu for core in node_cores[start + 1:start + 1 + size] for cpu in core]
            blocks[gpu.index] = (learner, pool)
    return blocks


def _counting(smt: bool) -> str:
    return "SMT threads included" if smt else "one per physical core; SMT siblings excluded, --smt uses them"


def _labels(gpus: list[Gpu], shown: int = 8) -> str:
    """The GPUs' labels, the first `shown` of a longer list (a recorded topology of hundreds: kilobytes)."""
    more = f", ... ({len(gpus)} in all)" if len(gpus) > shown else ""
    return ", ".join(g.label for g in gpus[:shown]) + more


def _too_few_cores(cores: dict[int, list[list[int]]], gpus: list[Gpu], node: int, smt: bool,
                   pool_cores: int | None) -> TopologyError:
    what = _counting(smt)
    return TopologyError(
        f"too few cores: NUMA node {node} has {len(cores.get(node, []))} usable physical core(s) "
        f"for {len(gpus)} GPU(s) ({_labels(gpus)})"
        f"{f' and --pool-cores {pool_cores}' if pool_cores is not None else ''}; "
        f"each rank needs 1 learner core and 2 simulation threads ({what})"
    )


def _scaling_configs(spread: list[Gpu], blocks: dict, node_of: dict[int, int], threads: int):
    """(configs, order, pairs) of the scaling series n1_local, n2_pool, n4_pool, ...: the
    first k GPUs of the spread, each with its block; every one compared with n1_local."""
    configs, order = {}, []
    for k in _rank_counts(len(spread)):
        chosen = sorted(g.index for g in spread[:k])
        name = "n1_local" if k == 1 else f"n{k}_pool"
        nodes = sorted({node_of[i] for i in chosen})
        plural, whose = ("", "its") if k == 1 else ("s", "each GPU's")
        where = f"node{'s' if len(nodes) > 1 else ''} {','.join(map(str, nodes))}"
        configs[name] = {
            "devices": ",".join(str(i) for i in chosen),
            "cpu_pools": [format_cpu_list(blocks[i][1]) for i in chosen],
            "learner_cpus": [format_cpu_list(blocks[i][0]) for i in chosen],
            "description": f"{k} GPU{plural}, a {threads}-thread pool on {whose} NUMA node ({where})",
        }
        order.append(name)
    return configs, order, [["n1_local", n] for n in order[1:]]


def _add_controls(configs: dict, order: list[str], pairs: list[list[str]], blocks: dict, first: int) -> None:
    """With several GPUs: n1_total (in the order), then the all-reduce and updates controls
    (named configurations outside it)."""
    largest = order[-1]
    union = sorted(cpu for i in blocks for cpu in blocks[i][1])
    configs["n1_total"] = {
        "devices": str(first),
        "cpu_pools": [format_cpu_list(union)],
        "learner_cpus": [format_cpu_list(blocks[first][0])],
        "description": f"1 GPU, one pool of all {len(union)} simulation threads of {largest} (the total-CPU control)",
    }
    order.append("n1_total")
    pairs.append(["n1_total", largest])
    _add_allreduce_controls(configs, pairs)
    # Time to quality: n2 with twice the updates per iteration keeps n1's updates per
    # env step (the seed's recipe halves them), for "do 2 GPUs walk sooner?"
    two = "n2_pool"
    configs[two + "_2x"] = {**configs[two], "overrides": {"num_critic_updates": 16, "num_actor_updates": 4},
                            "description": f"{configs[two]['description']}; 16 critic and 4 actor updates "
                                           "per iteration: n1_local's updates per env step"}
    pairs.append(["n1_local", two + "_2x"])


def _add_allreduce_controls(configs: dict, pairs: list[list[str]]) -> None:
    """The in-graph all-reduce's own gain (not in the default order; name them in `order`):
    n2 with the all-reduce between graph segments, in the collector-bound setting and in a
    learner-bound one (fewer envs per rank: the learner sets the pace)."""
    two = "n2_pool"
    for suffix, envs, setting in (("", None, "collector-bound"), ("_lb", LEARNER_BOUND_ENVS, "learner-bound")):
        for placement in ("in-graph", "between-graphs"):
            cname = two + suffix + ("_between" if placement == "between-graphs" else "")
            if cname == two:
                continue
            entry = {**configs[two], "overrides": {"allreduce": placement},
                     "description": f"{configs[two]['description']}; all-reduce {placement}, {setting}"
                                    + (f" ({envs} envs per rank)" if envs else "")}
            if envs:
                entry["num_envs"] = envs
            configs[cname] = entry
        pairs.append([two + suffix, two + suffix + "_between"])


def _reason(spread: list[Gpu], gpus_by_node: dict, cores: dict, threads: int, smt: bool,
            pool_cores: int | None) -> str:
    """The matrix's reason, a sentence for plan.json and the report."""
    per_node = ", ".join(f"node {n}: {len(gs)} GPU(s), {len(cores.get(n, []))} cores"
                         for n, gs in sorted(gpus_by_node.items()))
    return (
        f"{len(spread)} GPU(s) on {len(gpus_by_node)} NUMA node(s) ({per_node}); every GPU gets a learner "
        f"core and a {threads}-thread pool on its node "
        f"({'SMT threads included' if smt else 'one thread per physical core'}"
        f"{f', --pool-cores {pool_cores}' if pool_cores is not None else ''})"
        + ("; no n1_total: with one GPU it would be n1_local" if len(spread) == 1 else "")
    )


def _shared_gpu_configs(gpu: int, node_cores: list[list[int]]) -> dict | None:
    """Two ranks on the one GPU (CPU-side weak scaling and the two-rank code path; gloo
    sums the gradients between graph segments), each with a learner core and half of the
    node's other cores as its pool, beside one rank with one half and with both halves.
    None when the node has too few cores for two learner cores and two 2-thread pools.
    All of them run the learner as the shared ranks must (all-reduce placement
    between-graphs, eager losses), so that they differ in their ranks alone."""
    half = (len(node_cores) - 2) // 2
    if half < 2:
        return None
    learners = [node_cores[0], node_cores[half + 1]]
    pools = [[c for core in node_cores[1:half + 1] for c in core],
             [c for core in node_cores[half + 2:2 * half + 2] for c in core]]
    lists = [format_cpu_list(p) for p in pools]
    learner_lists = [format_cpu_list(c) for c in learners]
    pins = ";".join(learner_lists)
    one, both = f"n1_pool{len(pools[0])}", f"n1_pool{len(pools[0]) + len(pools[1])}"
    shared = {"devices": f"{gpu},{gpu}", "cpu_pools": lists, "learner_cpus": learner_lists,
              "overrides": {"allreduce": "between-graphs", "learner-cpu-ids": pins},
              "description": f"2 ranks sharing GPU {gpu}, {len(pools[0])}-thread pools, gradients summed by "
                             "gloo between graph segments (CPU-side weak scaling, not two GPUs)"}
    configs = {
        one: {"devices": str(gpu), "cpu_pools": [lists[0]], "learner_cpus": [learner_lists[0]],
              "overrides": {"allreduce": "between-graphs", "learner-cpu-ids": learner_lists[0]},
              "description": f"1 GPU, one {len(pools[0])}-thread pool (one rank of n2_shared)"},
        "n2_shared": shared,
        "n2_shared_nosync": {**shared, "overrides": {**shared["overrides"], "grad-sync": "off"},
                             "description": shared["description"].replace("gradients summed by gloo between "
                                                                           "graph segments", "no gradient sync")},
        both: {"devices": str(gpu), "cpu_pools": [format_cpu_list(pools[0] + pools[1])],
               "learner_cpus": [learner_lists[0]],
               "overrides": {"allreduce": "between-graphs", "learner-cpu-ids": learner_lists[0]},
               "description": f"1 GPU, one pool of both halves' {len(pools[0]) + len(pools[1])} threads"},
    }
    return {"configs": configs, "order": [one, "n2_shared"],
            "pairs": [[one, "n2_shared"], [one, "n2_shared_nosync"], [both, "n2_shared"]]}


# --- the matrix in the pipeline (sacscale.pipeline.planning) ----------------------------------------

def preset_from_matrix(template: dict, matrix: dict, name: str, order: list[str] | None = None) -> dict:
    """The template preset with the matrix's run configurations (devices, cpu_pools,
    description), order, pairs (those within `order`, the config's order when it gives
    one) and a probe on its first 2-rank configuration. learner_cpus are reserved CPUs,
    not run fields: the runs pin only the simulation pools, as the seed does."""
    configs = matrix.get("configs") if isinstance(matrix, dict) else None
    planned_order = matrix.get("order") if isinstance(matrix, dict) else None
    if not isinstance(configs, dict) or not isinstance(planned_order, list) or not planned_order:
        raise TopologyError(f"planner: the matrix for preset {name} has no 'configs' mapping and 'order' list")
    check_matrix_shape(configs, planned_order, matrix.get("pairs"))
    check_matrix_topology(matrix)
    run_configs = dict(template.get("run_configs") or {})
    for cname, entry in configs.items():
        fields = {k: entry[k] for k in ("devices", "cpu_pools", "description", "num_envs", "overrides") if k in entry}
        run_configs[cname] = {**(run_configs.get(cname) or {}), **fields}
    kept = set(order or planned_order)
    pairs = [p for p in matrix.get("pairs") or [] if set(p) <= kept]
    devices = [str(configs[n]["devices"]) for n in planned_order if n in configs]
    two_ranks = [d for d in devices if len(d.split(",")) == 2]
    probe = {**(template.get("probe") or {}), "devices": (two_ranks or devices or ["0"])[0]}
    return {**template, "run_configs": run_configs, "order": list(planned_order), "pairs": pairs, "probe": probe}


def pools_off_node(
    matrix: dict | None, configs: list[tuple[str, list[int], list[list[int]]]]
) -> tuple[bool, str | None]:
    """(topology known, the first pool off its GPU's NUMA node, or None) for run
    configurations given as (name, GPU indices, one pool per rank), by the matrix's `gpus`
    and `nodes`. A single-rank pool over several nodes, one of them its GPU's, is a
    deliberate total-CPU control and passes. TopologyError where those fields are not what
    plan-matrix writes (a recorded matrix is a file the user gives)."""
    if isinstance(matrix, dict):
        check_matrix_topology(matrix)
    if not isinstance(matrix, dict) or not matrix.get("nodes") or not matrix.get("gpus"):
        return False, None
    node_cpus = {int(n): set(parse_cpu_list(c)) for n, c in matrix["nodes"].items()}
    gpu_node = {int(g["index"]): int(g["node"]) for g in matrix["gpus"]}
    for name, devices, pools in configs:
        for device, pool in zip(devices, pools):
            node = gpu_node.get(device)
            if node not in node_cpus:
                continue
            outside = set(pool) - node_cpus[node]
            if outside and not (len(devices) == 1 and set(pool) & node_cpus[node]):
                return True, (f"{name}: GPU {device}'s pool {format_cpu_list(pool)} has CPUs "
                              f"{format_cpu_list(outside)} off its NUMA node {node}")
    return True, None
