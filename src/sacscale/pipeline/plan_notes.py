"""The notes the workflow prints under the plan's first line: what the config asks that the
plan takes but does not do as the reader may think, said once at planning."""

from __future__ import annotations

from sacscale.pipeline.plan_model import Plan
from sacscale.pipeline.planning import left_out_of_order
from sacscale.pipeline.probe_ranks import probe_ranks_note
from sacscale.usage import printable


def plan_notes(config: dict, plan: Plan) -> list[str]:
    """Each note as one line, without the `sacscale: note: ` the workflow puts before it."""
    notes = []
    left_out = left_out_of_order(config, plan.order)
    if left_out:  # checked but never run: not to be taken for ones that ran
        notes.append(f"run_configs {', '.join(left_out)}: not in order ({', '.join(plan.order)}), so checked "
                     "but not run; name them in order to run them")
    matrix_file = (config.get("planner") or {}).get("matrix")
    if matrix_file and plan.matrix is None:  # a named preset with a matrix is refused; auto may choose one
        notes.append(f"planner.matrix {printable(str(matrix_file))}: its run configurations are not used: preset "
                     f"auto chose {plan.preset}, which has its own; only preset planned takes a matrix's")
    probe = probe_ranks_note(plan)
    if probe:
        notes.append(probe)
    return notes
