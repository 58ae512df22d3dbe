"""Facts that environment.json states and other records state again, for verify's records
check (sacscale.evidence.records): the code's commit and dirty flag (run.json `code`), the
torch and Python versions (train_meta.json; correctness.json for torch; environment.json's
own `versions` and `torch`), the stored diff (environment.json `project.diff` against
source.diff), and the CPUs (environment.json `cpu`: its available CPUs and counts against
its own lscpu layout; each run's pinned CPUs, in train_meta.json, against that layout and
its available CPUs), the
GPUs (torch's against nvidia-smi's) and the interpreter (run.json `python`).

Each pair is written by the same pipeline from the same source (git, torch.__version__,
the interpreter, the kernel), so a disagreement is a record edited or copied from elsewhere.
The nvidia-smi topology's CPU affinity is not compared with the runs' pools: it names the
CPUs near each GPU, not the CPUs a run may use."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from sacscale.cpus import parse_cpu_list
from sacscale.evidence.manifest import sha256_file
from sacscale.evidence.result import EvidenceStructureError, load_json, same_value

ABSENT = object()  # a field the record does not hold (an older set's, or a trainer's that writes none)

DIFF_REDUCED = "source_diff_reduced.json"  # a committed set whose stored diff was reduced after recording


def opt(data, *keys):
    """data[k1][k2]... or ABSENT."""
    for key in keys:
        if not isinstance(data, dict) or key not in data:
            return ABSENT
        data = data[key]
    return data


def run_facts(env: dict, run: dict, meta: dict, reference: bool) -> dict[str, list[tuple[str, object]]]:
    """{quantity: [(source, value), ...]} that one run's records share with environment.json.
    The reference trainer runs in its own interpreter and records neither version."""
    facts = {
        "code commit": [("environment.json", opt(env, "project", "commit")), ("run.json", opt(run, "code", "commit"))],
        "code dirty": [("environment.json", opt(env, "project", "dirty")), ("run.json", opt(run, "code", "dirty"))],
        # both rules run `sacscale` of the same environment (envs/sacscale.yaml): the interpreter
        # verify-env described is the one that ran the run's wrapper
        "Python interpreter": [("environment.json", opt(env, "python", "executable")),
                               ("run.json", opt(run, "python"))],
    }
    if not reference:
        facts["torch version"] = [("environment.json", opt(env, "versions", "torch")),
                                  ("train_meta.json", opt(meta, "torch"))]
        facts["Python version"] = [("environment.json", opt(env, "python", "version")),
                                   ("train_meta.json", opt(meta, "python"))]
    return facts


def set_facts(env: dict, probe: dict | None) -> dict[str, list[tuple[str, object]]]:
    """{quantity: [(source, value), ...]} stated twice in environment.json or again in the
    correctness probe's record (absent record: not compared)."""
    torch = [("environment.json versions", opt(env, "versions", "torch")),
             ("environment.json torch", opt(env, "torch", "version"))]
    if probe is not None:
        torch.append(("correctness.json", opt(probe, "torch")))
    return {"torch version": torch}


def _layout_cpus(layout) -> set[int] | None:
    """The CPU ids of `lscpu -e=CPU,...` output (offline CPUs included), or None."""
    if not isinstance(layout, str):
        return None
    ids = {int(line.split()[0]) for line in layout.splitlines() if line.split() and line.split()[0].isdigit()}
    return ids or None


def _cpus(spec) -> set[int] | None:
    try:
        return set(parse_cpu_list(spec)) if isinstance(spec, (str, list)) else None
    except (TypeError, ValueError):
        return None


def cpu_problems(env: dict) -> list[str]:
    """environment.json's CPUs against its own lscpu layout: the CPUs available to the
    process exist there, are as many as it says, and no more than the online CPUs, which
    are no more than the layout lists."""
    cpu = opt(env, "cpu")
    layout = _layout_cpus(opt(cpu, "layout"))
    available = _cpus(opt(cpu, "available"))
    if layout is None or available is None:
        return []
    problems = []
    outside = available - layout
    if outside:
        problems.append(f"set: CPUs: environment.json cpu.available {str(cpu['available'])[:40]!r} names CPUs its "
                        f"cpu.layout (lscpu) does not list ({len(outside)} of them, e.g. {min(outside)})")
    count, logical = opt(cpu, "available_count"), opt(cpu, "logical_cpus")
    if count is not ABSENT and not same_value(count, len(available)):
        problems.append(f"set: CPUs: environment.json cpu.available_count says {count!r}, cpu.available lists "
                        f"{len(available)}")
    if isinstance(logical, int) and not len(available) <= logical <= len(layout):
        problems.append(f"set: CPUs: environment.json cpu.logical_cpus says {logical!r}, its cpu.layout (lscpu) "
                        f"lists {len(layout)} and {len(available)} are available")
    return problems


def _gpu_names(env: dict, *keys) -> list[str]:
    gpus = opt(env, *keys)
    return [g["name"] for g in gpus if isinstance(g, dict) and isinstance(g.get("name"), str)] \
        if isinstance(gpus, list) else []


# how CUDA (torch.cuda.get_device_properties(i).name) names a MIG instance: its GPU's name,
# " MIG " and the instance's profile, as NVIDIA's MIG guide names profiles: an optional
# compute-instance share (`1c.`), the GPU-instance share and its memory (`3g.40gb`), an
# optional media-extension suffix; e.g. "NVIDIA H100 80GB HBM3 MIG 1g.10gb"
MIG_INSTANCE = re.compile(r"(?P<gpu>.+) MIG (?:[1-7]c\.)?[1-7]g\.[0-9]{1,3}gb(?:\+me(?:\.all)?|-me|\+gfx)?")


def _gpu_of(torch_name: str) -> str:
    """The GPU a name torch reads is, or is a MIG instance of; a name holding " MIG " in any
    other form is left whole, so that it is one nvidia-smi does not list."""
    mig = MIG_INSTANCE.fullmatch(torch_name)
    return mig["gpu"] if mig else torch_name


def gpu_problems(env: dict) -> list[str]:
    """environment.json reads the machine's GPUs twice: torch (those CUDA_VISIBLE_DEVICES
    leaves it, in its own order) and nvidia-smi (all of them). Each GPU torch names is one
    nvidia-smi names, or a MIG instance of one, named as CUDA names it (MIG_INSTANCE)."""
    torch_names = Counter(_gpu_of(name) for name in _gpu_names(env, "torch", "gpus"))
    smi_names = Counter(_gpu_names(env, "nvidia", "gpus"))
    if not torch_names or not smi_names:
        return []
    unlisted = torch_names - smi_names
    if not unlisted:
        return []
    listed = ", ".join(f"{n} x {name}" for name, n in sorted(smi_names.items()))
    mig = " (a MIG instance is named '<GPU> MIG <profile>', e.g. '<GPU> MIG 1g.10gb')" \
        if any(" MIG " in name for name in unlisted) else ""
    return [f"set: GPUs: environment.json torch.gpus names {', '.join(sorted(unlisted))!r} beyond what "
            f"nvidia.gpus lists on the same machine (nvidia-smi: {listed}){mig}"]


def pool_problems(run_name: str, env: dict, meta: dict) -> list[str]:
    """The CPUs a run pinned (train_meta.json collector_pools, tied to the run's command by
    sacscale.evidence.pool_record) exist in the layout environment.json recorded on the run's
    host (the host is compared elsewhere) and are among the CPUs the pipeline's process could
    use there (cpu.available): a run cannot pin a CPU its process may not use."""
    pools = opt(meta, "collector_pools")
    if not isinstance(pools, dict):
        return []
    groups = [g for key in ("pools", "learner_affinity") for g in (pools.get(key) or []) if isinstance(g, list)]
    pinned = {c for g in groups for c in g if isinstance(c, int)}
    problems = []
    layout = _layout_cpus(opt(env, "cpu", "layout"))
    outside = sorted(pinned - layout) if layout is not None else []
    if outside:
        problems.append(f"{run_name}: CPU pools: train_meta.json pins CPU(s) {', '.join(map(str, outside[:8]))}, "
                        f"which environment.json's cpu.layout (lscpu, {len(layout)} CPUs) does not list")
    available = _cpus(opt(env, "cpu", "available"))
    unavailable = sorted(pinned - available - set(outside)) if available is not None else []
    if unavailable:
        problems.append(f"{run_name}: CPU pools: train_meta.json pins CPU(s) {', '.join(map(str, unavailable[:8]))}, "
                        f"which environment.json's cpu.available ({str(env['cpu']['available'])[:40]!r}, "
                        f"{len(available)} CPUs) does not hold: the CPUs the pipeline's process could use there")
    return problems


def _original(root: Path) -> tuple:
    """(bytes, sha256) of the stored diff before it was reduced, as DIFF_REDUCED records it."""
    try:
        original = load_json(root, DIFF_REDUCED).get("original")
    except EvidenceStructureError:
        return (None, None)
    return (original.get("bytes"), original.get("sha256")) if isinstance(original, dict) else (None, None)


def diff_findings(root: Path, env: dict) -> tuple[list[str], list[str]]:
    """(problems, notes): the stored diff environment.json describes (file, bytes, sha256;
    shown on the page) is source.diff as the set holds it, and a clean tree stored an empty one."""
    diff = opt(env, "project", "diff")
    if not isinstance(diff, dict) or not isinstance(diff.get("file"), str):
        return [], []
    name, recorded = diff["file"], (diff.get("bytes"), diff.get("sha256"))
    path = root / name
    problems = []
    if opt(env, "project", "dirty") is False and recorded[0] not in (0, None):
        problems.append(f"set: code dirty: environment.json says False, its stored diff {name} holds "
                        f"{recorded[0]!r} bytes")
    if "/" in name or name.startswith("."):
        return problems + [f"set: stored diff: environment.json names {name[:60]!r}, not a file of the set"], []
    if not path.is_file():
        if recorded[0] == 0:
            return problems, [f"{name}: environment.json records an empty diff (0 bytes); the set stores none"]
        return problems + [f"set: stored diff: environment.json records {name} ({recorded[0]!r} bytes), "
                           "the set has none"], []
    held = (path.stat().st_size, sha256_file(path))
    if held == recorded:
        return problems, []
    if (root / DIFF_REDUCED).is_file() and _original(root) == recorded:
        return problems, [f"{name}: reduced after it was recorded ({DIFF_REDUCED} lists what was taken out): "
                          "environment.json's size and hash are the original's"]
    return problems + [f"set: stored diff: environment.json says {name} is {recorded[0]!r} bytes, sha256 "
                       f"{str(recorded[1])[:12]!r}; it is {held[0]} bytes, sha256 {held[1][:12]!r}"], []
