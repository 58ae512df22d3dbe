"""Which preset a config runs, and why: the one it names, or for `preset: auto` the first
preset of the auto list written for exactly this machine's GPUs (with its CPU pools on
their GPUs' NUMA nodes when the topology is known), else the matrix planned from the
topology, else the first that fits with fewer GPUs, else the CPU preset."""

from __future__ import annotations

from collections.abc import Callable

from sacscale.cpus import format_cpu_list
from sacscale.parallel.matrix import pools_off_node
from sacscale.parallel.topology import TopologyError
from sacscale.pipeline.plan_model import Host, Plan
from sacscale.pipeline.plan_values import PlanError

NAMED = "named in the config"
# read only where the planned preset plans: given with another preset, they go unused
PLANNER_KEYS = ("matrix", "smt", "pool_cores")


def choose_preset(config: dict, presets_doc: dict, host: Host, matrix,
                  plan_candidate: Callable[[str], Plan]) -> tuple[str, str]:
    """(preset name, why). `matrix`: a callable giving the planned matrix, or None;
    `plan_candidate(name)`: the config's plan with that preset (PlanError if it has none)."""
    presets = presets_doc.get("presets", {})
    name = config.get("preset") or "auto"
    _refuse_empty_matrix(config)
    if name != "auto":
        if name not in presets:
            raise PlanError(f"preset: unknown preset {name!r} (known: auto, {', '.join(sorted(presets))})")
        _refuse_unread_planner(config, name, presets_doc)
        return name, NAMED
    auto = presets_doc.get("auto", {})
    fallback = auto.get("no_cuda", "cpu")
    if host.cuda_devices == 0:
        return fallback, "preset auto: no CUDA device visible, so the CPU preset"
    seen = f"{host.cuda_devices} CUDA device(s) and CPUs {format_cpu_list(host.cpus)} visible"
    exact, smaller, rejected = _fitting_presets(auto.get("cuda", []), host, matrix, plan_candidate)
    if exact:
        candidate, known = exact
        return candidate, (
            f"preset auto: {seen}; {candidate} is the first preset in the auto list written for "
            "exactly this many GPUs whose CPU pools exist here"
            + (" and lie on their GPUs' NUMA nodes" if known else "")
        )
    planned, failed = _planned_choice(auto, matrix, seen, rejected)
    if planned:
        return planned
    if smaller:
        return smaller[0], (
            f"preset auto: {seen}; {smaller[0]} is the first preset in the auto list that fits "
            f"(with fewer GPUs){failed}"
        )
    return fallback, (
        f"preset auto: {host.cuda_devices} CUDA device(s) visible but no GPU preset fits this machine's CPUs"
        f"{failed}; the CPU preset"
    )


def given_planner_keys(config: dict) -> list[str]:
    """The planner settings the config gives: a matrix, smt on, a pool size."""
    opts = config.get("planner") or {}
    return [key for key in PLANNER_KEYS if opts.get(key) is not None and opts.get(key) is not False]


def _refuse_empty_matrix(config: dict) -> None:
    """An empty matrix path (`--config 'planner={"matrix": ""}'`) was taken as none given:
    the planned preset then planned from this machine instead of the file meant."""
    matrix = (config.get("planner") or {}).get("matrix")
    if isinstance(matrix, str) and not matrix.strip():
        raise PlanError(f"planner.matrix: {matrix!r} is an empty path; give the file `sacscale plan-matrix "
                        "--output FILE` wrote, or leave planner.matrix out")


def _refuse_unread_planner(config: dict, name: str, presets_doc: dict) -> None:
    """Planner settings with a named preset that takes its run configurations from
    presets.yaml were never read, so a matrix or pool size meant for this set was silently
    not used. Under auto they are not refused: a config kept for a GPU machine may plan on a
    CPU box (the workflow prints a note instead, sacscale.pipeline.plan_notes)."""
    planned = presets_doc.get("auto", {}).get("planned")
    given = given_planner_keys(config)
    if not given or name == planned:
        return
    keys = ", ".join(f"planner.{key}" for key in given)
    if given == ["matrix"]:
        unread, cure = "never reads a matrix", "from it"
    else:
        unread, cure = "never plans", "with it" if len(given) == 1 else "with them"
    planned_one = f", or name preset: {planned} to plan {cure}" if planned else ""
    raise PlanError(f"{keys}: given, but preset {name} (named in the config) takes its run configurations from "
                    f"workflow/presets.yaml and {unread}; leave {keys} out{planned_one}")


def _fitting_presets(candidates: list[str], host: Host, matrix, plan_candidate):
    """Walks the auto list in order until a preset fits exactly: ((that preset, topology
    known) or None, the presets that fit with fewer GPUs, the exact ones refused for pools
    off their GPUs' NUMA nodes)."""
    smaller, rejected = [], []
    for candidate in candidates:
        try:
            plan = plan_candidate(candidate)
        except PlanError:
            continue
        needed = plan.gpus_needed()
        if needed < host.cuda_devices:
            smaller.append(candidate)
        elif needed == host.cuda_devices:
            known, off_node = _off_node(plan, matrix)
            if not off_node:
                return (candidate, known), smaller, rejected
            rejected.append(f"{candidate}: {off_node}")
    return None, smaller, rejected


def _planned_choice(auto: dict, matrix, seen: str, rejected: list[str]):
    """No named preset for exactly this machine: the matrix planned from its topology.
    ((name, why) or None, the planner's failure as a clause for the next reason)."""
    if not (auto.get("planned") and matrix is not None):
        return None, ""
    try:
        planned = matrix()
    except PlanError as exc:
        return None, f"; the topology planner failed ({exc})"
    why = "no preset in the auto list is written for exactly this many GPUs"
    if rejected:
        why += f" with its pools on its GPUs' NUMA nodes ({'; '.join(rejected)})"
    return (auto["planned"], (
        f"preset auto: {seen}; {why}, so the matrix planned from this machine's topology: "
        f"{planned.get('reason', '')}"
    )), ""


def asked_once(matrix):
    """The matrix source (a dict, a callable giving one, or None) as a callable that asks it
    at most once (a failure is kept and raised again)."""
    if matrix is None:
        return None
    kept = []

    def get() -> dict:
        if not kept:
            try:
                kept.append((matrix() if callable(matrix) else matrix, None))
            except PlanError as exc:
                kept.append((None, exc))
        if kept[0][1] is not None:
            raise kept[0][1]
        return kept[0][0]

    return get


def _off_node(plan: Plan, matrix) -> tuple[bool, str | None]:
    """(topology known, where the plan puts a pool off its GPU's NUMA node, or None)."""
    try:
        topo = matrix() if matrix is not None else None
    except PlanError:
        return False, None  # no planner, or it failed: nothing to check against
    configs = []
    for name in plan.order:
        rc = plan.run_configs[name]
        # under its own CUDA_VISIBLE_DEVICES a configuration's indices are not the planner's
        if rc.device_kind == "cuda" and rc.cpu_pools != "auto" and rc.cuda_visible_devices is None:
            configs.append((name, [int(d) for d in rc.devices.split(",")], rc.pool_cpus()))
    try:
        return pools_off_node(topo, configs)
    except TopologyError as exc:  # a recorded matrix's nodes or gpus of the wrong shape: named as the file's
        raise PlanError(str(exc)) from None
