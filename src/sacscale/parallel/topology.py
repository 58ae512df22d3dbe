"""The machine's topology -> the run matrix of `sacscale plan-matrix`.

Sources: the text of `lscpu -e=CPU,CORE,SOCKET,NODE` and `nvidia-smi topo -m`, exactly
as those tools print them (recorded files; `#` lines before the output are ignored, so
a recorded file can say where it came from), or the live machine: sysfs for the CPUs,
`nvidia-smi topo -m` for the GPUs.

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

GPU indices are the trainer's (CUDA) indices: nvidia-smi numbers GPUs in PCI bus order,
so the planned run configurations set CUDA_DEVICE_ORDER=PCI_BUS_ID (workflow/presets.yaml)
and a live plan under CUDA_VISIBLE_DEVICES renumbers the listed GPUs 0, 1, ...
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from sacscale.cpus import format_cpu_list, parse_cpu_list


class TopologyError(ValueError):
    """The topology cannot be read, or no matrix satisfies the rules on it."""


@dataclass(frozen=True)
class Cpu:
    id: int
    core: int
    socket: int
    node: int


@dataclass(frozen=True)
class Gpu:
    index: int                        # as the trainer sees it (CUDA index)
    label: str                        # nvidia-smi's name for it, e.g. "GPU4"
    node: int | None                  # NUMA Affinity; None when N/A or absent
    cpus: frozenset[int] | None       # CPU Affinity; None when N/A


@dataclass
class Topology:
    cpus: list[Cpu]
    gpus: list[Gpu]


# --- parsing the tools' text -------------------------------------------------------------

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def _lines(text: str) -> list[str]:
    """The tool's output lines: escape codes removed, leading `#` header lines dropped."""
    lines = _ANSI.sub("", text).splitlines()
    while lines and (lines[0].startswith("#") or not lines[0].strip()):
        lines.pop(0)
    return lines


def parse_lscpu(text: str) -> list[Cpu]:
    """`lscpu -e=CPU,CORE,SOCKET,NODE` -> the online CPUs.

    Columns may come in any order (they are found by the header). A `-` (lscpu's mark for
    an offline CPU) in CORE or SOCKET drops the CPU; a NODE column of `-` or none at all
    (a kernel without NUMA) puts every CPU on node 0.
    """
    lines = [line for line in _lines(text) if line.strip()]
    if not lines:
        raise TopologyError("lscpu: empty output")
    header = lines[0].split()
    missing = [c for c in ("CPU", "CORE", "SOCKET") if c not in header]
    if missing:
        raise TopologyError(
            f"lscpu: header {lines[0].strip()!r} lacks column(s) {', '.join(missing)}; "
            "record it with `lscpu -e=CPU,CORE,SOCKET,NODE`"
        )
    col = {name: header.index(name) for name in header}
    cpus = []
    for n, line in enumerate(lines[1:], start=2):
        fields = line.split()
        if len(fields) != len(header):
            raise TopologyError(f"lscpu: line {n} {line.strip()!r} has {len(fields)} fields, the header {len(header)}")
        if "-" in (fields[col["CORE"]], fields[col["SOCKET"]]):
            continue
        try:
            node_text = fields[col["NODE"]] if "NODE" in col else "-"
            cpus.append(Cpu(
                id=int(fields[col["CPU"]]),
                core=int(fields[col["CORE"]]),
                socket=int(fields[col["SOCKET"]]),
                node=0 if node_text == "-" else int(node_text),
            ))
        except ValueError:
            raise TopologyError(f"lscpu: line {n} {line.strip()!r} is not numbers") from None
    if not cpus:
        raise TopologyError("lscpu: no online CPU listed")
    return cpus


def parse_nvidia_topo(text: str) -> list[Gpu]:
    """`nvidia-smi topo -m` -> one Gpu per `GPU<n>` row of the matrix.

    Fields are tab-separated. The header names the device columns (GPUs, NICs) and then
    `CPU Affinity`, `NUMA Affinity` (newer drivers), `GPU NUMA ID`; a row has its name,
    one link cell per device column, then the affinities. Rows after the matrix (NIC
    rows, the legend) are ignored.
    """
    lines = _lines(text)
    header_at = next((i for i, line in enumerate(lines) if "CPU Affinity" in line), None)
    if header_at is None:
        if any(line.startswith("No devices were found") for line in lines):
            return []
        raise TopologyError("nvidia-smi topo -m: no header with a 'CPU Affinity' column")
    header = [h.strip() for h in lines[header_at].split("\t")]
    if header and header[0] == "":
        header = header[1:]  # the header starts with a tab: the row-name column is unnamed
    devices = header.index("CPU Affinity")
    gpus = []
    for line in lines[header_at + 1:]:
        if not line.strip():
            break  # the legend follows the matrix after a blank line
        fields = [f.strip() for f in line.split("\t")]
        match = re.fullmatch(r"GPU(\d+)", fields[0])
        if not match:
            continue  # NIC rows
        if len(fields) < devices + 2:
            raise TopologyError(f"nvidia-smi topo -m: row {fields[0]} has no CPU Affinity field")
        cpu_text = fields[devices + 1]
        numa_text = fields[devices + 2] if len(fields) > devices + 2 and "NUMA Affinity" in header else "N/A"
        try:
            cpus = None if cpu_text in ("N/A", "") else frozenset(parse_cpu_list(cpu_text))
        except ValueError as exc:
            raise TopologyError(f"nvidia-smi topo -m: {fields[0]} CPU Affinity: {exc}") from None
        node = int(numa_text) if numa_text.isdigit() else None
        gpus.append(Gpu(index=int(match.group(1)), label=fields[0], node=node, cpus=cpus))
    return gpus


# --- the live machine --------------------------------------------------------------------

def read_sysfs_cpus(root: str | Path = "/sys/devices/system") -> list[Cpu]:
    """The online CPUs from sysfs (`cpu/online`, `cpuN/topology/{core_id,physical_package_id}`,
    `node/nodeK/cpulist`), the same facts lscpu reads."""
    root = Path(root)
    try:
        online = parse_cpu_list((root / "cpu" / "online").read_text())
    except (OSError, ValueError) as exc:
        raise TopologyError(f"sysfs: cannot read the online CPUs under {root}: {exc}") from None
    node_of = {}
    for node_dir in sorted((root / "node").glob("node[0-9]*")):
        text = (node_dir / "cpulist").read_text().strip()
        for cpu in parse_cpu_list(text) if text else []:
            node_of[cpu] = int(node_dir.name[4:])
    cpus = []
    for cpu in online:
        topo = root / "cpu" / f"cpu{cpu}" / "topology"
        try:
            core = int((topo / "core_id").read_text())
            socket = int((topo / "physical_package_id").read_text())
        except (OSError, ValueError) as exc:
            raise TopologyError(f"sysfs: CPU {cpu} has no readable topology: {exc}") from None
        # core_id repeats across sockets; Cpu.core is compared together with the socket
        cpus.append(Cpu(id=cpu, core=core, socket=socket, node=node_of.get(cpu, 0)))
    return cpus


def live_gpus() -> tuple[list[Gpu], str]:
    """(GPUs, where from): `nvidia-smi topo -m`, renumbered as the trainer sees them under
    CUDA_VISIBLE_DEVICES (indices only: UUIDs or MIG names are refused)."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return [], "nvidia-smi (not installed)"
    try:
        proc = subprocess.run([smi, "topo", "-m"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as exc:
        return [], f"nvidia-smi topo -m (failed: {exc})"
    if proc.returncode != 0:
        return [], f"nvidia-smi topo -m (exit status {proc.returncode})"
    gpus = parse_nvidia_topo(proc.stdout)
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is None:
        return gpus, "nvidia-smi topo -m"
    items = [v.strip() for v in visible.split(",") if v.strip()]
    if not items or items == ["-1"]:
        return [], f"nvidia-smi topo -m (CUDA_VISIBLE_DEVICES={visible!r} hides every GPU)"
    if not all(v.isdigit() for v in items):
        raise TopologyError(
            f"CUDA_VISIBLE_DEVICES={visible!r}: the planner maps GPU indices only; "
            "give indices (e.g. 4,5) or unset it"
        )
    by_index = {g.index: g for g in gpus}
    absent = [v for v in items if int(v) not in by_index]
    if absent:
        raise TopologyError(f"CUDA_VISIBLE_DEVICES={visible!r}: nvidia-smi lists no GPU {', '.join(absent)}")
    renumbered = [Gpu(index=i, label=by_index[int(v)].label, node=by_index[int(v)].node, cpus=by_index[int(v)].cpus)
                  for i, v in enumerate(items)]
    return renumbered, f"nvidia-smi topo -m, CUDA_VISIBLE_DEVICES={visible}"


# --- planning ----------------------------------------------------------------------------

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


def plan_matrix(topo: Topology, *, smt: bool = False, pool_cores: int | None = None,
                allowed: set[int] | None = None) -> dict:
    """The run matrix (the JSON `sacscale plan-matrix` writes) for this topology.

    allowed: CPUs this process may use (the live plan passes its affinity mask); others
    are left out. pool_cores: physical cores per pool (default: as many as the node with
    the fewest cores per GPU allows, so that every pool has the same size).
    """
    cpus = [c for c in topo.cpus if allowed is None or c.id in allowed]
    if not topo.gpus:
        raise TopologyError("no GPU: the nvidia-smi topo -m matrix lists none")
    if not cpus:
        raise TopologyError("no CPU: the lscpu listing has none this process may use")
    node_cpus: dict[int, set[int]] = {}
    for c in cpus:
        node_cpus.setdefault(c.node, set()).add(c.id)
    cores = _physical_cores(cpus, smt)

    gpus_by_node: dict[int, list[Gpu]] = {}
    for gpu in sorted(topo.gpus, key=lambda g: g.index):
        gpus_by_node.setdefault(_gpu_node(gpu, node_cpus), []).append(gpu)

    # cores per pool: each node must hold, for each of its GPUs, a learner core and a pool
    fit = {node: (len(cores.get(node, [])) - len(gpus)) // len(gpus) for node, gpus in gpus_by_node.items()}
    tightest = min(fit, key=lambda n: (fit[n], n))
    size = fit[tightest]
    if pool_cores is not None:
        if pool_cores < 1:
            raise TopologyError(f"--pool-cores {pool_cores}: must be >= 1")
        if pool_cores > size >= 1:
            raise TopologyError(f"--pool-cores {pool_cores}: NUMA node {tightest} allows at most {size} cores per pool")
        size = min(size, pool_cores)

    # one block per GPU, kept in every configuration: the learner core, then the pool
    blocks: dict[int, tuple[list[int], list[int]]] = {}
    for node, gpus in gpus_by_node.items():
        for j, gpu in enumerate(gpus):
            start = j * (size + 1)
            node_cores = cores.get(node, [])
            learner = node_cores[start] if start < len(node_cores) else []
            pool = [cpu for core in node_cores[start + 1:start + 1 + size] for cpu in core]
            blocks[gpu.index] = (learner, pool)
    threads = min(len(pool) for _, pool in blocks.values())
    if threads < 2:
        gpus = gpus_by_node[tightest]
        what = "SMT threads included" if smt else "one per physical core; SMT siblings excluded, --smt uses them"
        raise TopologyError(
            f"too few cores: NUMA node {tightest} has {len(cores.get(tightest, []))} usable physical core(s) "
            f"for {len(gpus)} GPU(s) ({', '.join(g.label for g in gpus)})"
            f"{f' and --pool-cores {pool_cores}' if pool_cores is not None else ''}; "
            f"each rank needs 1 learner core and 2 simulation threads ({what})"
        )
    # smt: equal pools even where a core has fewer threads (a CPU outside the affinity mask)
    blocks = {i: (learner, pool[:threads]) for i, (learner, pool) in blocks.items()}

    node_of = {g.index: n for n, gs in gpus_by_node.items() for g in gs}
    spread = _spread(gpus_by_node)
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
    largest = order[-1]
    first = sorted(g.index for g in spread[:1])[0]
    pairs = [["n1_local", n] for n in order[1:]]
    if len(spread) > 1:
        union = sorted(cpu for i in blocks for cpu in blocks[i][1])
        configs["n1_total"] = {
            "devices": str(first),
            "cpu_pools": [format_cpu_list(union)],
            "learner_cpus": [format_cpu_list(blocks[first][0])],
            "description": f"1 GPU, one pool of all {len(union)} simulation threads of {largest} (the total-CPU control)",
        }
        order.append("n1_total")
        pairs.append(["n1_total", largest])
        # The in-graph all-reduce's own gain (not in the default order; name them in `order`):
        # n2 with the all-reduce between graph segments, in the collector-bound setting and
        # in a learner-bound one (fewer envs per rank: the learner sets the pace).
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
            if suffix:
                pairs.append([two + suffix, two + suffix + "_between"])
            else:
                pairs.append([two, two + "_between"])
        # Time to quality: n2 with twice the updates per iteration keeps n1's updates per
        # env step (the seed's recipe halves them), for "do 2 GPUs walk sooner?"
        configs[two + "_2x"] = {**configs[two], "overrides": {"num_critic_updates": 16, "num_actor_updates": 4},
                                "description": f"{configs[two]['description']}; 16 critic and 4 actor updates "
                                               "per iteration: n1_local's updates per env step"}
        pairs.append(["n1_local", two + "_2x"])

    if len(spread) == 1:
        shared = _shared_gpu_configs(spread[0].index, cores.get(node_of[spread[0].index], []))
        if shared:
            configs.update(shared["configs"])
            order += shared["order"]
            pairs += shared["pairs"]

    per_node = ", ".join(f"node {n}: {len(gs)} GPU(s), {len(cores.get(n, []))} cores"
                         for n, gs in sorted(gpus_by_node.items()))
    reason = (
        f"{len(spread)} GPU(s) on {len(gpus_by_node)} NUMA node(s) ({per_node}); every GPU gets a learner "
        f"core and a {threads}-thread pool on its node ({'SMT threads included' if smt else 'one thread per physical core'}"
        f"{f', --pool-cores {pool_cores}' if pool_cores is not None else ''})"
        + ("; no n1_total: with one GPU it would be n1_local" if len(spread) == 1 else "")
    )
    return {
        "configs": configs,
        "order": order,
        "pairs": pairs,
        "reason": reason,
        "gpus": [{"index": g.index, "label": g.label, "node": node_of[g.index]} for g in sorted(spread, key=lambda g: g.index)],
        "nodes": {str(n): format_cpu_list(c) for n, c in sorted(node_cpus.items())},
        "smt": smt,
        "pool_threads": threads,
    }


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


def load_topology(lscpu: str | None = None, nvidia_smi_topo: str | None = None) -> tuple[Topology, set[int] | None, str]:
    """(topology, CPUs allowed, where it came from): each part from its recorded file when
    given, else from this machine (then only the CPUs of this process's affinity mask)."""
    if lscpu:
        cpus, allowed, cpu_src = parse_lscpu(Path(lscpu).read_text()), None, lscpu
    else:
        cpus, allowed, cpu_src = read_sysfs_cpus(), set(os.sched_getaffinity(0)), "sysfs"
    if nvidia_smi_topo:
        gpus, gpu_src = parse_nvidia_topo(Path(nvidia_smi_topo).read_text()), nvidia_smi_topo
    else:
        gpus, gpu_src = live_gpus()
    return Topology(cpus, gpus), allowed, f"CPUs from {cpu_src}, GPUs from {gpu_src}"


# --- the matrix in the pipeline (sacscale.pipeline.runplan) -----------------------------------------

def preset_from_matrix(template: dict, matrix: dict, name: str, order: list[str] | None = None) -> dict:
    """The template preset with the matrix's run configurations (devices, cpu_pools,
    description), order, pairs (those within `order`, the config's order when it gives
    one) and a probe on its first 2-rank configuration. learner_cpus are reserved CPUs,
    not run fields: the runs pin only the simulation pools, as the seed does."""
    configs = matrix.get("configs") if isinstance(matrix, dict) else None
    planned_order = matrix.get("order") if isinstance(matrix, dict) else None
    if not isinstance(configs, dict) or not isinstance(planned_order, list) or not planned_order:
        raise TopologyError(f"planner: the matrix for preset {name} has no 'configs' mapping and 'order' list")
    run_configs = dict(template.get("run_configs") or {})
    for cname, entry in configs.items():
        if not isinstance(entry, dict) or "devices" not in entry or "cpu_pools" not in entry:
            raise TopologyError(f"planner: matrix configuration {cname!r} lacks devices or cpu_pools")
        fields = {k: entry[k] for k in ("devices", "cpu_pools", "description", "num_envs", "overrides") if k in entry}
        run_configs[cname] = {**(run_configs.get(cname) or {}), **fields}
    kept = set(order or planned_order)
    pairs = [p for p in matrix.get("pairs") or [] if set(p) <= kept]
    devices = [str(configs[n]["devices"]) for n in planned_order if n in configs]
    two_ranks = [d for d in devices if len(d.split(",")) == 2]
    probe = {**(template.get("probe") or {}), "devices": (two_ranks or devices or ["0"])[0]}
    return {**template, "run_configs": run_configs, "order": list(planned_order), "pairs": pairs, "probe": probe}


def pools_off_node(matrix: dict | None, configs: list[tuple[str, list[int], list[list[int]]]]) -> tuple[bool, str | None]:
    """(topology known, the first pool off its GPU's NUMA node, or None) for run
    configurations given as (name, GPU indices, one pool per rank), by the matrix's `gpus`
    and `nodes`. A single-rank pool over several nodes, one of them its GPU's, is a
    deliberate total-CPU control and passes."""
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
