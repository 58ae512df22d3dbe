"""A run's name and seed as the planner gives them (sacscale.pipeline.planning): repeat k of
configuration c is named <prefix>_r<k>_<c>, and every configuration of repeat k runs with the
plan's seed + k - 1 (paired repeats: the page says both configurations of a repeat use the
same seed). The records are compared with each other elsewhere (records._facts), so a seed
moved in all of them alike would pass there; here the plan's base seed and the run's repeat
give the seed each record must hold. runs[] is the execution order (the plan's
`execution_order`, which the runs' windows follow, binding.check_windows_in_order): repeat k's
configurations run back to back in the plan's schedule, so each position has its planned
repeat and configuration, and two runs' repeats swapped in all their records do not pass.

A plan value these rules are made from, of a type the planner never writes (a seed 1.0 or
true, a prefix 5), is named, never a reason to skip a rule; so is a size past the planner's
bounds (repeats, the configurations a repeat), before anything is built of it: the planned
order is repeats x order positions, compared with runs[] one by one, never held whole."""

from __future__ import annotations

import json
from collections.abc import Iterator

from sacscale.evidence.result import same_value
from sacscale.evidence.shared_facts import ABSENT
from sacscale.pipeline.plan_model import SCHEDULES, repeat_order
from sacscale.pipeline.plan_values import MAX_ORDER, MAX_REPEATS

SEED_RULE = "the plan's seed + the run's repeat - 1: both configurations of a repeat run with one seed"


def _whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _strings(value) -> bool:
    return isinstance(value, list) and all(isinstance(x, str) for x in value)


# the plan fields the rules here are made from: (the test of the planner's type, its words)
_PLAN_FIELDS = {"seed": (_whole, "a whole number"), "prefix": (lambda v: isinstance(v, str), "a string"),
                "repeats": (_whole, "a whole number"),
                "order": (_strings, "a list of configuration names"),
                "schedule": (lambda v: v in SCHEDULES, f"one of {', '.join(SCHEDULES)}"),
                "execution_order": (_strings, "a list of run names")}


def _as_json(value) -> str:
    """The value as plan.json spells it (true, not True), cut short; escapes kept."""
    text = json.dumps(value, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def plan_value_problems(plan: dict, made_here: bool) -> list[str]:
    """Each plan field the run names, seeds and order are derived from that is of a type the
    planner never writes; in a set made by this code (`made_here`), also each one absent (a
    rule without its field would check nothing)."""
    out = []
    for key, (fits, kind) in _PLAN_FIELDS.items():
        if key not in plan:
            if made_here:
                out.append(f"plan.json: {key}: absent, but the planner writes it (the runs' names, seeds and order "
                           "are derived from it)")
        elif not fits(plan[key]):
            out.append(f"plan.json: {key} {_as_json(plan[key])}: not {kind}, as the planner writes it (the runs' "
                       "names, seeds and order are derived from it)")
    return out + _size_problems(plan)


def _size_problems(plan: dict) -> list[str]:
    """plan.json repeats and order (of the planner's types) past the planner's bounds."""
    repeats, order = plan.get("repeats"), plan.get("order")
    out = []
    if _whole(repeats) and not 1 <= repeats <= MAX_REPEATS:
        side = "more" if repeats > MAX_REPEATS else "fewer"
        out.append(f"plan.json: repeats {_as_json(repeats)}: {side} than the planner allows "
                   f"({MAX_REPEATS if side == 'more' else 1})")
    if _strings(order) and not 1 <= len(order) <= MAX_ORDER:
        out.append(f"plan.json: order: {len(order)} run configurations, but the planner allows 1 to {MAX_ORDER} "
                   "a repeat")
    return out


def _sizes_planned(plan: dict) -> bool:
    """The plan's repeats, order and schedule are of the planner's types and within its bounds."""
    repeats, order = plan.get("repeats"), plan.get("order")
    return (_whole(repeats) and _strings(order) and plan.get("schedule", "alternating") in SCHEDULES
            and not _size_problems(plan))


def planned_seed(plan: dict, entry: dict) -> int | None:
    """The seed the planner gives the run of plan.json runs entry `entry`; None where the
    plan's seed or the run's repeat is not a whole number (plan_value_problems names the plan's;
    records._facts a repeat the run's other records do not hold)."""
    base, repeat = plan.get("seed"), entry.get("repeat")
    return base + repeat - 1 if _whole(base) and _whole(repeat) else None


def seed_problems(name: str, planned: int | None, recorded: list[tuple[str, object]]) -> list[str]:
    """Each recorded seed ((record and field, value), ABSENT where not recorded) that is not
    the planned one, named with the seed the plan gives."""
    if planned is None:
        return []
    return [f"{name}: {where} {value!r}, but the plan gives seed {planned} ({SEED_RULE})"
            for where, value in recorded if value is not ABSENT and not same_value(value, planned)]


def run_name_problems(plan: dict) -> list[str]:
    """Each plan.json runs entry whose name is not the planner's for its repeat and
    configuration: the repeat (and with it the seed) moved under the run's name."""
    prefix = plan.get("prefix")
    if not isinstance(prefix, str):
        return []
    out = []
    for i, entry in enumerate(plan.get("runs") or []):
        if isinstance(entry, dict) and _whole(entry.get("repeat")) and isinstance(entry.get("config"), str):
            named = f"{prefix}_r{entry['repeat']}_{entry['config']}"
            if entry.get("name") != named:
                out.append(f"plan.json: runs[{i}] {str(entry.get('name'))[:80]!r} has repeat {entry['repeat']} and "
                           f"configuration {entry['config']!r}, which the planner names {named!r}")
    return out


def _planned_positions(plan: dict) -> Iterator[tuple[int, str]]:
    """(repeat, configuration) of each position of the planner's execution order, one at a
    time; a plan without a schedule is an older set's, which ran the alternating one."""
    order, schedule = plan["order"], plan.get("schedule", "alternating")
    return ((k, c) for k in range(1, plan["repeats"] + 1) for c in repeat_order(order, k, schedule))


def run_order_problems(plan: dict) -> list[str]:
    """plan.json runs[] against the planner's execution order (where the plan's repeats,
    order and schedule are the planner's; plan_value_problems names them otherwise): each
    position's repeat and configuration, its index, and `execution_order` the runs' names in
    that order."""
    runs = [e for e in plan.get("runs") or [] if isinstance(e, dict)]
    out = []
    if _sizes_planned(plan):
        planned = plan["repeats"] * len(plan["order"])
        if len(runs) != planned:
            out.append(f"plan.json: runs lists {len(runs)} runs, the plan's repeats and order give {planned}")
        positions = _planned_positions(plan)
        schedule = plan.get("schedule", "alternating")
        for i, (entry, (k, c)) in enumerate(zip(runs, positions)):
            if not (same_value(entry.get("repeat"), k) and entry.get("config") == c):
                out.append(f"plan.json: runs[{i}] {str(entry.get('name'))[:80]!r} is repeat "
                           f"{str(entry.get('repeat'))[:20]} of {str(entry.get('config'))[:40]!r}, but the plan's "
                           f"{schedule} schedule runs repeat {k} of {c!r} there (runs[] is the order they ran)")
    out += [f"plan.json: runs[{i}] index {str(e.get('index'))[:20]}, but it is run {i + 1} (index {i})"
            for i, e in enumerate(runs) if "index" in e and not same_value(e.get("index"), i)]
    order = plan.get("execution_order")
    if _strings(order) and order != [e.get("name") for e in runs]:
        out.append("plan.json: execution_order is not the runs[] names in their order (the order they ran, which "
                   "the runs' windows must follow)")
    return out


def position_facts(plan: dict, entry: dict, resolved: dict) -> dict[str, list[tuple[str, object]]]:
    """The prefix of the run's name and its position in the execution order, in the plan and
    in run.json resolved_config, for records._agree (a plan without a prefix is named by
    plan_value_problems)."""
    facts = {"run index": [("plan.json", entry.get("index", ABSENT)),
                           ("run.json resolved_config", resolved.get("index", ABSENT))]}
    prefix = plan.get("prefix")
    if isinstance(prefix, str):
        facts["run name prefix"] = [("plan.json", prefix), ("run.json resolved_config", resolved.get("prefix", ABSENT))]
    return facts
