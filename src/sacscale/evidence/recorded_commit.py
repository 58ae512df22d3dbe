"""The set's recorded commit (environment.json `project.commit`, each run.json
`code.commit`), which the page tells its reader to check out to rebuild the code:

- its form: the pipeline records what `git rev-parse HEAD` writes, 40 lower-case hex
  digits, or nothing where it did not run from a git checkout (the key absent, or null
  where git found no HEAD). Anything else (`HEAD`, a branch, upper-case hex, any text) is
  a problem in a set made by this code, a note in an older one: the page's rebuild line
  would check out whatever the reader's git makes of it.
- its presence: in a set made by this code, null is a problem (null_commit_problems).
- its time, where the git checkout verify runs from holds it (code_history): the code
  that ran existed before the runs began, so a commit committed after the earliest run
  start (or environment.json's `recorded_at`, taken before the runs) is a problem.
  COMMIT_SKEW_S allows for the clocks of the machine that committed and the machine that
  ran: hosts kept by NTP differ by well under a second, one without it drifts by seconds a
  day, and an hour covers a clock set a few minutes off or an hour out by a daylight-saving
  slip; a commit made a working session after the runs is beyond it. Every committed set's
  commit is 0.3 to 12 h older than its first run."""

from __future__ import annotations

import math
from datetime import datetime, timezone
from pathlib import Path

from sacscale.evidence.code_history import CODE_ROOT, commit_notes, commit_time, is_commit_id
from sacscale.evidence.shared_facts import ABSENT

COMMIT_SKEW_S = 3600.0


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 50 else text[:47] + "..."


def _form_findings(recorded: list[tuple[str, object]], made_here: bool) -> tuple[list[str], list[str]]:
    """(problems, notes): each recorded value that is neither a commit id nor "none"."""
    lines, seen = [], set()
    for field, value in recorded:
        if value is ABSENT or value is None or is_commit_id(value) or repr(value) in seen:
            continue  # one line for each value: the copies' agreement is checked with the other shared facts
        seen.add(repr(value))
        lines.append(f"{field} {_shown(value)}: not a commit id as git writes one (40 lower-case hex digits) nor "
                     "null (no git checkout): the page's rebuild line would check out something else")
    return (lines, []) if made_here else ([], [f"{line} (an older set)" for line in lines])


def epoch_seconds(value) -> float | None:
    """A recorded time as Unix seconds: a number (run.json start_time) or ISO text with its
    zone (environment.json recorded_at); None where it is neither."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            return None
        return parsed.timestamp() if parsed.tzinfo is not None and in_calendar(parsed) else None
    return None


def in_calendar(parsed: datetime) -> bool:
    """Whether a time with its zone is within years 1-9999 in UTC as well (9999-12-31T23:59:59-14:00
    is not), so that it can be shown in UTC."""
    try:
        parsed.astimezone(timezone.utc)
    except OverflowError:
        return False
    return True


def utc_text(epoch: float) -> str:
    try:
        return datetime.fromtimestamp(epoch, timezone.utc).isoformat(timespec="seconds")
    except (OverflowError, ValueError, OSError):  # a recorded number past any calendar date
        return f"{epoch:.0f} s after 1970 (no calendar date)"


def earliest_start(env_recorded_at, run_starts: list) -> tuple[float, str] | None:
    """(the earliest time the set's records give for its runs' start, where it is from)."""
    times = [(t, "environment.json recorded_at") for t in [epoch_seconds(env_recorded_at)] if t is not None]
    times += [(t, "run.json start_time") for t in map(epoch_seconds, run_starts) if t is not None]
    return min(times) if times else None


def _late_problems(recorded: list[tuple[str, object]], began: tuple[float, str] | None,
                   code_root: Path) -> list[str]:
    if began is None:
        return []
    problems, seen = [], set()
    for field, commit in recorded:
        if not is_commit_id(commit) or commit in seen:
            continue
        seen.add(commit)
        committed = commit_time(commit, code_root)
        if committed is not None and committed - began[0] > COMMIT_SKEW_S:
            problems.append(f"{field} {commit[:12]}: committed {utc_text(committed)}, "
                            f"{(committed - began[0]) / 3600:.1f} h after the runs began ({utc_text(began[0])}, "
                            f"{began[1]}): the code that ran cannot be a commit made after it "
                            f"(clocks may differ by {COMMIT_SKEW_S / 3600:g} h)")
    return problems


def null_commit_problems(recorded: list[tuple[str, object]], strict: bool) -> list[str]:
    """In a set made by this code (`strict`), a commit recorded as null: verify-env records
    `git rev-parse HEAD` of the checkout the pipeline runs from (the workflow is that
    checkout's), null only in a repository without a single commit, whose code no commit
    rebuilds. A null would switch off every check of the commit (its time, the stored diff
    against it, the presets at it). An absent one is named with the other shared facts;
    an older set's null stays as it was recorded."""
    nulls = [field for field, value in recorded if value is None]
    if not strict or not nulls:
        return []
    more = f" (and {len(nulls) - 1} more)" if len(nulls) > 1 else ""
    return [f"{nulls[0]}{more}: null, but the pipeline records the commit its checkout ran (git rev-parse HEAD): "
            "with none, no check of the commit runs and the page names no code to rebuild"]


def commit_findings(recorded: list[tuple[str, object]], began: tuple[float, str] | None, made_here: bool,
                    code_root: Path = CODE_ROOT) -> tuple[list[str], list[str]]:
    """(problems, notes) on the recorded commits, [(field, value)] with environment.json's
    first; `began`: earliest_start's answer."""
    problems, notes = _form_findings(recorded, made_here)
    problems += _late_problems(recorded, began, code_root)
    first_field = {}
    for field, value in recorded:
        if is_commit_id(value):
            first_field.setdefault(value, field)
    return problems, notes + commit_notes(first_field, code_root)
