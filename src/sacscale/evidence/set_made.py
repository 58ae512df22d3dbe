"""Whether a set was made by this code, so that a field this code writes and a set lacks is
a problem, not a note of an older set, and the strict checks apply.

One field cannot decide it: a forger deletes the plan's `schedule` and every strict check
turns into a note. So the set's own marks of its age are read together: the plan's
schedule, and the records only this code's sets have, each of which verify checks on its
own (evidence.json's format and page format, the report's numbers.json, the plan's
evaluation size). A set that has any of them is made by this code; one that has another
mark but no schedule is named, as a set no pipeline of any time wrote.
"""

from __future__ import annotations

from pathlib import Path

from sacscale.evidence import scope
from sacscale.report.names import NUMBERS_NAME

# the pipeline has written the schedule into every plan since this day
SCHEDULE_SINCE = "2026-12-01"


def _marks(root: Path, plan: dict) -> list[str]:
    """The records of the set that only sets made by this code have."""
    marks = []
    if scope.format_of(root) >= scope.FORMAT:
        marks.append(f"{scope.SCOPE_FILE} format {scope.format_of(root)}")
    page = scope.report_page_of(root)[0]
    if page is not None:
        marks.append(f"{scope.SCOPE_FILE} {scope.PAGE_KEY} {str(page)[:20]}")
    reports = scope.reports_of(root)
    if reports is not None and (reports / NUMBERS_NAME).is_file():
        marks.append(f"reports/{root.name}/{NUMBERS_NAME}")
    if "evaluation" in plan:
        marks.append("plan.json evaluation")
    return marks


def made_by_this_code(root: Path, plan) -> tuple[bool, list[str]]:
    """(whether the set is one this code made, problems): a set without the schedule
    whose other records say this code made it is named and checked as this code's."""
    if not isinstance(plan, dict):
        return False, []
    marks = _marks(root, plan)
    if "schedule" in plan or not marks:
        return "schedule" in plan, []
    say = "says" if len(marks) == 1 else "say"
    return True, [f"plan.json: no schedule, which the pipeline writes into every plan since {SCHEDULE_SINCE}; yet "
                  f"{', '.join(marks)} {say} the set was made by this code"]


def numbers_expected(root: Path, plan) -> list[str]:
    """The marks of a set made after the report stage began writing numbers.json (the page
    format in evidence.json, the plan's evaluation size, both newer): such a set's report
    has one, and a missing one was removed."""
    marks = [f"{scope.SCOPE_FILE} {scope.PAGE_KEY}"] if scope.report_page_of(root)[0] is not None else []
    return marks + (["plan.json evaluation"] if isinstance(plan, dict) and "evaluation" in plan else [])
