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
from sacscale.report.build import environment_section
from sacscale.report.document import Bullets, Document, to_markdown
from sacscale.report.shown import shown_page

COMMIT_LINE = "project commit: "


def recorded_environment(root: Path) -> dict | None:
    """environment.json as a record, or None (missing or unreadable: named elsewhere)."""
    try:
        env = loads_record(read_text(root / "environment.json", "environment.json"))
    except (EvidenceStructureError, ValueError):
        return None
    return env if isinstance(env, dict) else None


def expected_lines(env: dict) -> list[str]:
    """The Environment list's lines as a reader sees them, written by the report stage."""
    try:
        items = [b for b in environment_section(env) if isinstance(b, Bullets)]
    except (KeyError, TypeError, AttributeError, ValueError):
        return []  # a record of another shape: the report stage refuses it, and so does verify elsewhere
    _, prose = shown_page(to_markdown(Document(title="", blocks=items)), html=False)
    return [line for line in prose.splitlines() if line.strip()]


def environment_problems(rel: str, prose: str, env: dict | None) -> list[str]:
    """Each line the record gives that the page's visible text does not show as written."""
    if env is None:
        return []
    shown = prose.splitlines()
    missing = []
    for line in expected_lines(env):
        if line.startswith(COMMIT_LINE):
            head = line.split(";", 1)[0]
            if not any(s.split(";", 1)[0] == head for s in shown):
                missing.append(line)
        elif line not in shown:
            missing.append(line)
    return [f"{rel}: its Environment list does not show {line[:120]!r}, which environment.json gives: does not "
            "match the evidence" for line in missing[:3]]
