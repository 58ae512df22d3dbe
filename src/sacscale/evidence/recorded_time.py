"""environment.json's `recorded_at`: the pipeline writes it, an ISO time with its UTC
offset, when it records the environment, before any run starts. It bounds the runs'
starts where a commit's time is judged (recorded_commit), so a set made by this code must
hold it in that form and no later than its earliest run start (clocks of the machine that
recorded the environment and the machines that ran may differ by COMMIT_SKEW_S). Every
committed set recorded it 28 to 106 s before its first run."""

from __future__ import annotations

from datetime import datetime

from sacscale.evidence.recorded_commit import COMMIT_SKEW_S, epoch_seconds, in_calendar, utc_text
from sacscale.evidence.shared_facts import ABSENT

FIELD = "environment.json recorded_at"


def _form_problem(value) -> str | None:
    """Why `value` is not the time the pipeline writes; None where it is."""
    if value is ABSENT:
        return f"{FIELD}: missing; the pipeline records when it recorded the environment"
    shown = repr(value)[:40]
    if not isinstance(value, str):
        return f"{FIELD} {shown}: not a time (ISO text with its UTC offset, as the pipeline records)"
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return f"{FIELD} {shown}: not a time (ISO text with its UTC offset, as the pipeline records)"
    if parsed.utcoffset() is None:
        return (f"{FIELD} {shown}: not a time with its UTC offset, as the pipeline records (the runs' times are "
                "bounded by it)")
    if not in_calendar(parsed):
        return (f"{FIELD} {shown}: out of range (in UTC it falls outside the years 1-9999), not a time the "
                "pipeline records")
    return None


def _order_problem(recorded: float, run_starts: list) -> str | None:
    starts = [t for t in map(epoch_seconds, run_starts) if t is not None]
    if not starts or recorded - min(starts) <= COMMIT_SKEW_S:
        return None
    return (f"{FIELD} {utc_text(recorded)}: {(recorded - min(starts)) / 3600:.1f} h after the first run began "
            f"({utc_text(min(starts))}, run.json start_time); the environment is recorded before the runs "
            f"(clocks may differ by {COMMIT_SKEW_S / 3600:g} h)")


def recorded_at_findings(env: dict, run_starts: list, made_here: bool) -> tuple[list[str], list[str]]:
    """(problems, notes): recorded_at's form and its order with the runs' starts; in a set
    not made by this code, notes."""
    if not env:
        return [], []
    value = env.get("recorded_at", ABSENT)
    line = _form_problem(value)
    if line is None:
        line = _order_problem(epoch_seconds(value), run_starts)
    if line is None:
        return [], []
    return ([line], []) if made_here else ([], [f"{line} (an older set)"])
