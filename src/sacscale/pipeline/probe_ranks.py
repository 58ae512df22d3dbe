"""The probe's ranks against the runs'. The correctness probe compares the gradient sync
of its own ranks with a single-process reference: a one-rank probe of a set whose runs
train several ranks compares no all-reduce at all and passes without testing the sync the
runs rely on, so planning refuses it. A probe of two or more ranks, narrower than the
widest run, is taken with a note: it drives the same sync code (a mean over the ranks, the
start-up broadcast), and the planned preset probes its first 2-rank configuration by
design (sacscale.parallel.matrix.preset_from_matrix); the page says how wide it was."""

from __future__ import annotations

from sacscale.pipeline.plan_model import Plan
from sacscale.pipeline.plan_values import PlanError, config_key, shown


def probe_ranks(probe: dict) -> int:
    return len(str(probe["devices"]).split(","))


def widest_run(run_configs: dict, order: list[str]):
    """The widest configuration of `order` that our trainer runs with its gradients synced,
    or None. The reference trainer's ranks are synced by its own code, which the probe does
    not drive; ranks with the sync off (a control) have none to test."""
    ours = [run_configs[n] for n in order if run_configs[n].trainer == "sacscale" and not _sync_off(run_configs[n])]
    return max(ours, key=lambda rc: rc.world_size, default=None)  # the first of equals


def _sync_off(rc) -> bool:
    return rc.overrides.get("grad-sync", rc.overrides.get("grad_sync")) == "off"


def check_probe_ranks(probe: dict, config: dict, preset_name: str, run_configs: dict, order: list[str]) -> None:
    """PlanError where the probe has one rank and a planned run of our trainer several."""
    widest = widest_run(run_configs, order)
    if widest is None or probe_ranks(probe) > 1 or widest.world_size < 2:
        return
    given = "devices" in (config.get("probe") or {})
    key = config_key("config" if given else preset_name, "probe.devices")
    raise PlanError(f"{key}: {shown(probe['devices'])} is one rank, and run configuration {widest.name} trains "
                    f"{widest.world_size} (devices {shown(widest.devices)}): a one-rank probe compares no gradient "
                    "all-reduce, so it would pass without testing the runs' sync; give probe.devices as many ranks "
                    f"as the widest run, e.g. {shown(widest.devices)}")


def probe_ranks_note(plan: Plan) -> str | None:
    """The note for a probe of fewer ranks than the widest run (more than one: fewer is
    refused), or None."""
    widest = widest_run(plan.run_configs, plan.order)
    ranks = probe_ranks(plan.probe)
    if widest is None or ranks >= widest.world_size:
        return None
    return (f"probe.devices {shown(plan.probe['devices'])} tests the gradient sync over {ranks} ranks and "
            f"{widest.name} trains {widest.world_size}: the probe passes for {ranks} ranks only (the report says "
            f"so); give probe.devices {widest.world_size} ranks to probe the widest run")
