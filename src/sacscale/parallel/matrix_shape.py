"""The shape of a recorded matrix (config planner.matrix), checked before the pipeline uses it.

A recorded matrix is a file the user gives; its run configurations become the planned
preset's and its pairs are filtered by name, so a field of the wrong type (`cpu_pools: 7`,
`overrides: 5`, a pair `5`) failed deep inside planning with a Python TypeError. Each field
is held here to the type the config file's own run configurations have (its schema), and
a `TopologyError` names the key in the file ("planner: " is replaced by the file's name)."""

from __future__ import annotations

import json

from sacscale.cpus import MAX_CPU_ID, first_overlap, format_cpu_list, named_twice, parse_cpu_list
from sacscale.parallel.topology import TopologyError

REDO = "correct the file or record it again (`sacscale plan-matrix --output FILE`)"


def check_matrix_shape(configs: dict, order: list, pairs) -> None:
    """TopologyError for the first field of the matrix's configs, order or pairs whose type
    is not what a run configuration, an order or a pair holds."""
    for cname, entry in configs.items():
        if not isinstance(entry, dict) or "devices" not in entry or "cpu_pools" not in entry:
            raise TopologyError(f"planner: matrix configuration {cname!r} lacks devices or cpu_pools")
        for field, check in FIELDS.items():
            if field in entry and (wanted := check(entry[field])):
                raise _wrong(f"configs.{cname}.{field}", entry[field], wanted)
        if problem := _learner_cpus_problem(entry):
            raise TopologyError(f"planner: configs.{cname}.learner_cpus: {problem}; {REDO}")
    for index, name in enumerate(order):
        if not isinstance(name, str):
            raise _wrong(f"order[{index}]", name, "a run configuration's name")
    if pairs is not None and not isinstance(pairs, list):
        raise _wrong("pairs", pairs, "a list of pairs [baseline, compared]")
    for index, pair in enumerate(pairs or []):
        if not isinstance(pair, list) or len(pair) != 2 or not all(isinstance(n, str) for n in pair):
            raise _wrong(f"pairs[{index}]", pair, "a pair [baseline, compared] of run configuration names")


def _learner_cpus_problem(entry: dict) -> str | None:
    """What makes a configuration's learner_cpus a layout no machine runs, as the trainer
    judges --learner-cpu-ids: one CPU list per rank, no CPU of two ranks' learners, none in
    a collector pool of the configuration (a pool that does not parse is named later, when
    the run configuration is checked)."""
    if "learner_cpus" not in entry:
        return None
    ranks = len(entry["devices"].replace(" ", "").split(","))
    lists = _pools({"cpu_pools": entry["learner_cpus"]})
    if len(lists) != ranks:
        return f"{len(lists)} CPU list(s) for {ranks} rank(s) (devices {_shown(entry['devices'])}); one list per rank"
    learners = []
    for rank, cpus in enumerate(lists):
        try:
            learners.append(parse_cpu_list(cpus))
            twice = named_twice(cpus)
        except ValueError:
            return f"rank {rank}: {_shown(cpus)} is not a CPU list such as '8-39' or '0,2-5'"
        if twice:
            return f"rank {rank}: {_shown(cpus)} names CPU(s) {format_cpu_list(twice)} twice; name each CPU once"
    pooled = {cpu for pool in _parsed_pools(entry) for cpu in pool}
    for rank, cpus in enumerate(learners):
        if shared := set(cpus) & pooled:
            return f"rank {rank}'s learner CPUs {format_cpu_list(shared)} are in a collector pool (cpu_pools)"
    if overlap := first_overlap(learners):
        return f"the learners of ranks {overlap[0]} and {overlap[1]} share CPUs {format_cpu_list(overlap[2])}"
    return None


def learner_cpus_absent(entry, cpus: frozenset[int]) -> str | None:
    """The first rank of a configuration's learner_cpus (checked by check_matrix_shape) that
    names CPUs outside `cpus`, the machine's, as a clause; None when all are there."""
    lists = _pools({"cpu_pools": entry.get("learner_cpus")}) if isinstance(entry, dict) else []
    for rank, listed in enumerate(lists):
        if absent := set(parse_cpu_list(listed)) - cpus:
            return (f"rank {rank} names CPUs {format_cpu_list(absent)} that do not exist on this machine "
                    f"(CPUs available to this process: {format_cpu_list(cpus)})")
    return None


def _parsed_pools(entry: dict) -> list[list[int]]:
    """The configuration's pools that parse."""
    parsed = []
    for pool in _pools(entry):
        try:
            parsed.append(parse_cpu_list(pool))
        except ValueError:
            continue
    return parsed


def check_matrix_topology(matrix: dict) -> None:
    """TopologyError for the first of the matrix's topology fields (`nodes`, `gpus`, `smt`,
    `pool_threads`, `reason`, `source`) whose type is not what `sacscale plan-matrix` writes:
    the planner judges a preset's pools by its `nodes` and `gpus`; nor a GPU or a CPU listed
    twice, nor a number past what it counts, nor a GPU on a node `nodes` does not list or a
    configuration's GPU `gpus` does not list (the planner could not judge that GPU's pools). A
    field left out passes (the topology is then unknown)."""
    for field, check in TOPOLOGY_FIELDS.items():
        if matrix.get(field) is not None and (wanted := check(matrix[field])):
            raise _wrong(field, matrix[field], wanted)
    for index, gpu in enumerate(matrix.get("gpus") or []):
        for field, check in GPU_FIELDS.items():
            if wanted := check(gpu.get(field)):
                raise _wrong(f"gpus[{index}].{field}", gpu.get(field), wanted)
    problem = (_gpu_listed_twice(matrix.get("gpus") or []) or _cpu_listed_twice(matrix.get("nodes") or {})
               or _node_not_listed(matrix) or _device_not_listed(matrix))
    if problem:
        raise TopologyError(f"planner: {problem}; {REDO}")
    _check_pool_threads(matrix)


def _gpu_listed_twice(gpus: list) -> str | None:
    """A GPU index the list holds twice: the planner maps each GPU to one node."""
    first: dict[int, int] = {}
    for position, gpu in enumerate(gpus):
        earlier = first.setdefault(gpu["index"], position)
        if earlier != position:
            return f"gpus[{position}].index: GPU {gpu['index']} is listed twice (gpus[{earlier}] too), each GPU once"
    return None


def _node_not_listed(matrix: dict) -> str | None:
    """A GPU on a NUMA node the matrix's `nodes` does not list, where it lists any."""
    nodes = matrix.get("nodes") or {}
    for position, gpu in enumerate(matrix.get("gpus") or [] if nodes else []):
        if str(gpu["node"]) not in nodes:
            listed = format_cpu_list(int(node) for node in nodes)
            return (f"gpus[{position}].node: NUMA node {gpu['node']} is not in the matrix's nodes (it lists nodes "
                    f"{listed}), so the CPUs of GPU {gpu['index']}'s pools cannot be judged")
    return None


def _device_not_listed(matrix: dict) -> str | None:
    """A GPU a configuration's devices name that the matrix's `gpus` does not list, where it
    lists any (devices that are no GPU list are named when the run configuration is checked)."""
    listed = {gpu["index"] for gpu in matrix.get("gpus") or []}
    configs = matrix.get("configs") if listed and isinstance(matrix.get("configs"), dict) else {}
    for cname, entry in configs.items():
        devices = entry.get("devices") if isinstance(entry, dict) else None
        words = devices.replace(" ", "").split(",") if isinstance(devices, str) else []
        for device in (int(w) for w in words if w.isascii() and w.isdigit()):
            if device not in listed:
                return (f"configs.{cname}.devices: GPU {device} is not in the matrix's gpus (it lists GPUs "
                        f"{format_cpu_list(listed)}), so its pool's NUMA node cannot be judged")
    return None


def _cpu_listed_twice(nodes: dict) -> str | None:
    """A CPU that a node's list names twice or that two nodes list: a CPU is on one NUMA node."""
    owner: dict[int, str] = {}
    for node, cpus in nodes.items():
        if twice := named_twice(cpus):
            return f"nodes.{node}: {_shown(cpus)} names CPU {twice[0]} twice, each CPU once"
        for cpu in parse_cpu_list(cpus):
            if owner.setdefault(cpu, node) != node:
                return f"nodes.{node}: CPU {cpu} is on NUMA node {owner[cpu]} too; a CPU is on one node"
    return None


def _check_pool_threads(matrix: dict) -> None:
    """pool_threads, the CPUs of each GPU's pool, at most the CPUs of the largest pool of the
    configurations, of the largest NUMA node, and of a CPU list (whichever the file holds)."""
    threads = matrix.get("pool_threads")
    if threads is None:
        return
    node_sizes = [len(parse_cpu_list(cpus)) for cpus in (matrix.get("nodes") or {}).values()]
    bounds = [(max(_pool_sizes(matrix.get("configs"))), "of the largest pool of configs"),
              (max(node_sizes, default=0), "of the largest NUMA node of nodes")]
    bound, whose = min((b for b in bounds if b[0] > 0), default=(MAX_CPU_ID + 1, "a CPU list can name"))
    if threads > bound:
        raise _wrong("pool_threads", threads, f"a whole number of threads from 1 to {bound}, the CPUs {whose}")


def _pool_sizes(configs) -> list[int]:
    """The CPUs of each pool of the configurations that parses, and 0; a configuration of the
    wrong shape is named by check_matrix_shape."""
    return [0] + [len(pool) for entry in (configs.values() if isinstance(configs, dict) else [])
                  for pool in _parsed_pools(entry)]


def _pools(entry) -> list[str]:
    """A configuration's cpu_pools as CPU lists (given as a list, or joined by ';')."""
    pools = entry.get("cpu_pools") if isinstance(entry, dict) else None
    pools = pools.split(";") if isinstance(pools, str) else pools
    return [pool for pool in pools if isinstance(pool, str)] if isinstance(pools, list) else []


def _nodes(value) -> str | None:
    wanted = "a mapping of NUMA node numbers (\"0\") to CPU lists (\"0-55,112-167\")"
    if not isinstance(value, dict):
        return wanted
    for node, cpus in value.items():
        if not _node_written(node) or not isinstance(cpus, str):
            return wanted
        try:
            parse_cpu_list(cpus)
        except ValueError:
            return wanted
    return None


def _gpus(value) -> str | None:
    wanted = "a list of GPUs ({\"index\": 0, \"node\": 0})"
    return None if isinstance(value, list) and all(isinstance(g, dict) for g in value) else wanted


def _node_written(node) -> bool:
    """A NUMA node's number as the kernel writes it (no leading zero: "0" and "00" would be one node)."""
    digits = isinstance(node, str) and node.isascii() and node.isdigit() and len(node) <= len(str(MAX_NODE))
    return digits and str(int(node)) == node and int(node) <= MAX_NODE


def _gpu_index(value) -> str | None:
    wanted = f"a GPU's number from 0 to {MAX_GPU_INDEX} (a run configuration's devices)"
    return None if _count(value) is None and 0 <= value <= MAX_GPU_INDEX else wanted


def _node(value) -> str | None:
    return None if _count(value) is None and 0 <= value <= MAX_NODE else f"a NUMA node's number from 0 to {MAX_NODE}"


def _flag(value) -> str | None:
    return None if isinstance(value, bool) else "true or false"


def _threads(value) -> str | None:
    return None if _count(value) is None and value >= 1 else "a whole number of threads, at least 1"


def _text(value) -> str | None:
    return None if isinstance(value, str) else "a string"


def _cpu_pools(value) -> str | None:
    wanted = "a CPU list per rank ([\"0-3\", \"4-7\"]) or the lists joined by ';'"
    if isinstance(value, str):
        return None
    if not isinstance(value, list) or not value or not all(isinstance(pool, str) for pool in value):
        return wanted
    return None


def _count(value) -> str | None:
    return None if isinstance(value, int) and not isinstance(value, bool) else "a whole number"


def _overrides(value) -> str | None:
    wanted = "a mapping of trainer options to strings, numbers or booleans"
    if not isinstance(value, dict) or not all(isinstance(v, (str, int, float, bool)) for v in value.values()):
        return wanted
    return None


# the fields of a matrix configuration (those preset_from_matrix copies into the run
# configurations, and the learner CPUs it reserves), each with its check
FIELDS = {"devices": _text, "cpu_pools": _cpu_pools, "description": _text, "num_envs": _count,
          "overrides": _overrides, "learner_cpus": _cpu_pools}
# the matrix's own fields besides configs, order and pairs, and those of each of its GPUs
TOPOLOGY_FIELDS = {"nodes": _nodes, "gpus": _gpus, "smt": _flag, "pool_threads": _threads, "reason": _text,
                   "source": _text}
GPU_FIELDS = {"index": _gpu_index, "node": _node}
MAX_NODE = 1023  # Linux allows at most 1024 NUMA nodes
MAX_GPU_INDEX = 999  # a run configuration's devices name a GPU by at most 3 digits


def _wrong(key: str, value, wanted: str) -> TopologyError:
    return TopologyError(f"planner: {key}: {_shown(value)} is not {wanted}; {REDO}")


def _shown(value) -> str:
    text = json.dumps(value, ensure_ascii=True)
    return text if len(text) <= 60 else text[:57] + "..."
