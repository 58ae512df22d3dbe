"""The report's Environment list against the set's environment record: each line the
report stage writes from environment.json (GPUs, driver, versions, CPUs, the project's
commit) must be on the page as that code writes it today. The tables and ratios were
checked, these lines were not: a page that said `NVIDIA B200` over a record of an H200
passed verify.

Sets made before the stored source diff said less on the commit line (no "; no diff was
stored ..."): that line is compared up to its first `;`.
"""

from __future__ import annotations

from pathlib import Path

from sacscale.evidence.result import EvidenceStructureError, read_text
from sacscale.reading import loads_record
from sacscale.report.build import ENVIRONMENT_SHAPE, environment_section
from sacscale.report.document import Bullets, Document, to_markdown
from sacscale.report.shown import shown_page
from sacscale.shapes import record_problem

COMMIT_LINE = "project commit: "


def expected_environment(root: Path) -> tuple[list[str] | None, list[str]]:
    """(the Environment list's lines as a reader sees them, written by the report stage from
    environment.json; problems). No record, or one unreadable (named elsewhere): no lines.
    A record of a shape the report stage cannot show is a problem, not a check skipped."""
    try:
        env = loads_record(read_text(root / "environment.json", "environment.json"))
    except (EvidenceStructureError, ValueError):
        return None, []
    problem = record_problem(env, ENVIRONMENT_SHAPE) if isinstance(env, dict) else "it is not an object"
    if problem:
        return None, [f"environment.json: not a record the report stage wrote its Environment list from "
                      f"({problem}): does not match the evidence"]
    items = [b for b in environment_section(env) if isinstance(b, Bullets)]
    _, prose = shown_page(to_markdown(Document(title="", blocks=items)), html=False)
    return [line for line in prose.splitlines() if line.strip()], []


def environment_problems(rel: str, prose: str, expected: list[str] | None) -> list[str]:
    """Each line the record gives that the page's visible text does not show as written."""
    if not expected:
        return []
    shown = prose.splitlines()
    missing = []
    for line in expected:
        if line.startswith(COMMIT_LINE):
            head = line.split(";", 1)[0]
            if not any(s.split(";", 1)[0] == head for s in shown):
                missing.append(line)
        elif line not in shown:
            missing.append(line)
    return [f"{rel}: its Environment list does not show {line[:120]!r}, which environment.json gives: does not "
            "match the evidence" for line in missing[:3]]
