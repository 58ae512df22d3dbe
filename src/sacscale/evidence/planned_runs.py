"""A run's name and seed as the planner gives them (sacscale.pipeline.planning): repeat k of
configuration c is named <prefix>_r<k>_<c>, and every configuration of repeat k runs with the
plan's seed + k - 1 (paired repeats: the page says both configurations of a repeat use the
same seed). The records are compared with each other elsewhere (records._facts), so a seed
moved in all of them alike would pass there; here the plan's base seed and the run's repeat
give the seed each record must hold."""

from __future__ import annotations

from sacscale.evidence.result import same_value
from sacscale.evidence.shared_facts import ABSENT

SEED_RULE = "the plan's seed + the run's repeat - 1: both configurations of a repeat run with one seed"


def _whole(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def planned_seed(plan: dict, entry: dict) -> int | None:
    """The seed the planner gives the run of plan.json runs entry `entry`; None where the
    plan's seed or the run's repeat is not a whole number (a problem named elsewhere)."""
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
