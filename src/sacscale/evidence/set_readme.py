"""A README.md in the set's folder (results/<set>/), which a repository browser shows first
when the set is opened. No stage writes one: the older sets carry one written by hand
beside their evidence, which verify does not read, so it is named in the notes; its markup
is held to the report page's rules on what runs code or hides content. A set of the current
evidence format (evidence.json) holds only what its stages write, so a README there is named
as a problem, as one in its report folder is (sacscale.evidence.report_files)."""

from __future__ import annotations

from pathlib import Path

from sacscale.evidence.report_html import active_markup_problems
from sacscale.reading import read_limited

NAME = "README.md"


def readme_findings(root: Path, current_format: bool) -> tuple[list[str], list[str]]:
    """(problems, notes) on results/<set>/README.md; none where the set has none."""
    path = root / NAME
    if not path.exists() and not path.is_symlink():
        return [], []
    rel = f"results/{root.name}/{NAME}"
    if current_format:
        return [f"{rel}: not a file any stage writes (a set of this evidence format holds only those), so nothing "
                "checks what it says; a repository browser shows it first"], []
    note = f"{rel}: written by hand, not checked by verify: what it says is not the evidence's"
    try:
        text = read_limited(path).decode("utf-8")
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return [f"{rel}: cannot be read as UTF-8 text ({type(exc).__name__})"], [note]
    return active_markup_problems(rel, text), [note]
