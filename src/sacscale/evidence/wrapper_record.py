"""run.json against itself, as the run wrapper (sacscale.pipeline.run_record) writes it:
`status` is what its `timed_out`, `interrupted_by`, `exit_status` and `error` give (the
wrapper's own run_status; the run's events are checked as its metrics), `command_line`
is its `command` joined for a shell (shlex.join), and `duration_s` is its end time less
its start time. Only where both sides are recorded (older sets lack some)."""

from __future__ import annotations

import math
import shlex

from sacscale.number_kinds import is_finite_number
from sacscale.pipeline.run_record import run_status

STATUS_FIELDS = ("status", "timed_out", "interrupted_by", "exit_status")


def _status_problem(name: str, run: dict) -> list[str]:
    if not all(key in run for key in STATUS_FIELDS):
        return []
    derived = run_status(run["timed_out"], run["interrupted_by"], run["exit_status"], run.get("error"), True)
    if run["status"] == derived:
        return []
    return [f"{name}: run.json status {str(run['status'])[:40]!r}, but its timed_out {str(run['timed_out'])[:20]}, "
            f"interrupted_by {str(run['interrupted_by'])[:20]} and exit_status {str(run['exit_status'])[:20]} "
            f"give {derived!r} (the run wrapper's status)"]


def _command_line_problem(name: str, run: dict) -> list[str]:
    command, line = run.get("command"), run.get("command_line")
    if not (isinstance(command, list) and all(isinstance(a, str) for a in command)) or "command_line" not in run:
        return []
    if line == shlex.join(command):
        return []
    shown = str(line)
    return [f"{name}: run.json command_line {shown if len(shown) <= 160 else shown[:157] + '...'!r} is not "
            "its command list joined for a shell (the list is what the run ran and what verify parses)"]


def _duration_problem(name: str, run: dict) -> list[str]:
    start, end, duration = run.get("start_time"), run.get("end_time"), run.get("duration_s")
    if "duration_s" not in run or not (is_finite_number(start) and is_finite_number(end)):
        return []
    derived = round(end - start, 3)
    if is_finite_number(duration) and math.isclose(duration, derived, rel_tol=0, abs_tol=1e-6):
        return []
    return [f"{name}: run.json duration_s {str(duration)[:20]}, its end_time less its start_time is {derived!r}"]


def wrapper_problems(name: str, run: dict) -> list[str]:
    return _status_problem(name, run) + _command_line_problem(name, run) + _duration_problem(name, run)
