"""The machine's topology, as `sacscale plan-matrix` reads it.

Sources: the text of `lscpu -e=CPU,CORE,SOCKET,NODE` and `nvidia-smi topo -m`, exactly
as those tools print them (recorded files; `#` lines before the output are ignored, so
a recorded file can say where it came from), or the live machine: sysfs for the CPUs,
`nvidia-smi topo -m` for the GPUs. The run matrix planned from it: sacscale.parallel.matrix.

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

from sacscale.cpus import MAX_CPU_ID, parse_cpu_list, whole_number


def shares_cuda_device(devices: list[str]) -> bool:
    """Whether two ranks of this host name the same CUDA device (e.g. `--devices 0,0`);
    here, not in sacscale.parallel.launch, so that the trainer's config checks load no torch."""
    cuda = [d for d in devices if d != "cpu"]
    return len(set(cuda)) < len(cuda)


_RECORDED = re.compile(r"NCCL_[A-Z0-9_]+|CUDA_VISIBLE_DEVICES")


def recorded_variable(name: str) -> bool:
    """Whether verify-env records the environment variable (environment.json `env`): NCCL's
    and the visible CUDA devices, which decide how the ranks talk and what they see; the
    report shows these only, and verify names any other. NCCL reads upper-case names only."""
    return _RECORDED.fullmatch(name) is not None


def backend_for(devices: list[str]) -> str:
    """The collective backend of this host's ranks: NCCL for one CUDA device per rank;
    gloo on CPU, and where ranks share a CUDA device, which NCCL refuses (gloo stages
    CUDA tensors through the host)."""
    return "gloo" if devices[0] == "cpu" or shares_cuda_device(devices) else "nccl"


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


def _check_cpu_row(cpus: list[Cpu], n: int, line: str) -> None:
    """The row just read: numbers a machine has (a CPU of 10**23 or -1 was planned into a
    pool, which the run then could not pin) and a CPU not listed before (twice, it was
    counted as two cores)."""
    cpu = cpus[-1]
    if not all(0 <= v <= MAX_CPU_ID for v in (cpu.id, cpu.core, cpu.socket, cpu.node)):
        raise TopologyError(f"lscpu: line {n} {line.strip()[:80]!r}: a number outside 0..{MAX_CPU_ID}")
    if any(other.id == cpu.id for other in cpus[:-1]):
        raise TopologyError(f"lscpu: line {n} {line.strip()[:80]!r}: CPU {cpu.id} is listed twice")


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
                id=whole_number(fields[col["CPU"]]),
                core=whole_number(fields[col["CORE"]]),
                socket=whole_number(fields[col["SOCKET"]]),
                node=0 if node_text == "-" else whole_number(node_text),
            ))
        except ValueError:
            raise TopologyError(f"lscpu: line {n} {line.strip()!r} is not numbers") from None
        _check_cpu_row(cpus, n, line)
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
        match = re.fullmatch(r"GPU([0-9]+)", fields[0])
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
        try:
            node = None if numa_text in ("N/A", "") else whole_number(numa_text)
        except ValueError as exc:
            raise TopologyError(f"nvidia-smi topo -m: {fields[0]} NUMA Affinity: {exc}") from None
        gpus.append(Gpu(index=int(match.group(1)), label=fields[0], node=node, cpus=cpus))
    return gpus


# --- the live machine --------------------------------------------------------------------

def read_sysfs_cpus(root: str | Path = "/sys/devices/system") -> list[Cpu]:
    """The online CPUs from sysfs (`cpu/online`, `cpuN/topology/{core_id,physical_package_id}`,
    `node/nodeK/cpulist`), the same facts lscpu reads."""
    root = Path(root)
    try:
        online = parse_cpu_list((root / "cpu" / "online").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise TopologyError(f"sysfs: cannot read the online CPUs under {root}: {exc}") from None
    node_of = {}
    for node_dir in sorted((root / "node").glob("node[0-9]*")):
        text = (node_dir / "cpulist").read_text(encoding="utf-8").strip()
        for cpu in parse_cpu_list(text) if text else []:
            node_of[cpu] = int(node_dir.name[4:])
    cpus = []
    for cpu in online:
        topo = root / "cpu" / f"cpu{cpu}" / "topology"
        try:
            core = int((topo / "core_id").read_text(encoding="utf-8"))
            socket = int((topo / "physical_package_id").read_text(encoding="utf-8"))
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
        proc = subprocess.run([smi, "topo", "-m"], check=False, capture_output=True, text=True, timeout=60)
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


def load_topology(
    lscpu: str | None = None, nvidia_smi_topo: str | None = None
) -> tuple[Topology, set[int] | None, str]:
    """(topology, CPUs allowed, where it came from): each part from its recorded file when
    given, else from this machine (then only the CPUs of this process's affinity mask)."""
    if lscpu:
        cpus, allowed, cpu_src = parse_lscpu(Path(lscpu).read_text(encoding="utf-8")), None, lscpu
    else:
        cpus, allowed, cpu_src = read_sysfs_cpus(), set(os.sched_getaffinity(0)), "sysfs"
    if nvidia_smi_topo:
        gpus, gpu_src = parse_nvidia_topo(Path(nvidia_smi_topo).read_text(encoding="utf-8")), nvidia_smi_topo
    else:
        gpus, gpu_src = live_gpus()
    return Topology(cpus, gpus), allowed, f"CPUs from {cpu_src}, GPUs from {gpu_src}"
