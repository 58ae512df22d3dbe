"""The notes the workflow prints under the plan's first line: what the config asks that the
plan takes but does not do as the reader may think, said once at planning."""

from __future__ import annotations

from sacscale.pipeline.plan_model import Plan
from sacscale.pipeline.planning import left_out_of_order
from sacscale.pipeline.preset_choice import given_planner_keys
from sacscale.pipeline.probe_ranks import probe_ranks_note
from sacscale.usage import printable


def plan_notes(config: dict, plan: Plan) -> list[str]:
    """Each note as one line, without the `sacscale: note: ` the workflow puts before it."""
    notes = []
    left_out = left_out_of_order(config, plan.order)
    if left_out:  # checked but never run: not to be taken for ones that ran
        notes.append(f"run_configs {', '.join(left_out)}: not in order ({', '.join(plan.order)}), so checked "
                     "but not run; name them in order to run them")
    notes += _unused_planner_notes(config, plan)
    probe = probe_ranks_note(plan)
    if probe:
        notes.append(probe)
    return notes


def _unused_planner_notes(config: dict, plan: Plan) -> list[str]:
    """Planner settings the plan did not use (a named preset with them is refused; auto may
    choose one that never plans, and a recorded matrix is planned already)."""
    opts = config.get("planner") or {}
    given = given_planner_keys(config)
    settings = ", ".join(f"planner.{key} {printable(str(opts[key]).lower())}" for key in given if key != "matrix")
    if plan.matrix is None and "matrix" in given:
        notes = [f"planner.matrix {printable(str(opts['matrix']))}: its run configurations are not used: preset "
                 f"auto chose {plan.preset}, which has its own; only preset planned takes a matrix's"]
    else:
        notes = []
    if settings and plan.matrix is None:
        notes.append(f"{settings}: not used: preset auto chose {plan.preset}, which has its own run "
                     "configurations; only preset planned runs the planner")
    elif settings and "matrix" in given:
        notes.append(f"{settings}: not used: the recorded planner.matrix was planned already "
                     "(give them to `sacscale plan-matrix` when recording it)")
    return notes
