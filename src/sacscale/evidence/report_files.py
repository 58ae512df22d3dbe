"""The files of a set's report folder (reports/<set>/): only what the report stage writes
there. verify checks those files by name; a page of someone else's beside them
(`reports/S/README.md`, which a repository browser shows first) would pass unread, so any
other file is named."""

from __future__ import annotations

import os
from pathlib import Path

from sacscale.evidence.best_video import VIDEO_NAMES
from sacscale.report.figure_names import FIGURES

# what the report stage (and render-best before it) writes, relative to reports/<set>/
WRITTEN = frozenset({"report.md", "report.html", "numbers.json", "figures/best_run.json",
                     *(f"figures/{name}" for name in (*FIGURES.values(), *VIDEO_NAMES))})
# the audit zip the pipeline's closing lines offer (`snakemake --report reports/S/audit.zip`):
# Snakemake's copy of the report and evidence, never read as evidence
AUDIT_ZIP = "audit.zip"
_MOST = 1000  # entries looked at: a report folder holds about 15


def _entries(reports: Path) -> list[str]:
    """Every entry under `reports`, relative, links not followed (a link is an entry)."""
    found = []
    for folder, dirs, files in os.walk(reports, followlinks=False):
        here = Path(folder).relative_to(reports)
        found += [(here / name).as_posix() for name in files]
        found += [(here / name).as_posix() for name in dirs if os.path.islink(os.path.join(folder, name))]
        if len(found) > _MOST:
            break
    return sorted(found)


def report_folder_findings(reports: Path, rel: str) -> tuple[list[str], list[str]]:
    """(problems, notes): files in the report folder that the report stage does not write,
    and a second video beside the one render-best wrote. No committed report folder holds
    another file, so there is no older report that may."""
    others = [e for e in _entries(reports) if e not in WRITTEN and e != AUDIT_ZIP]
    notes = [f"{rel}/{AUDIT_ZIP}: Snakemake's audit copy, not read by verify (the evidence is results/ "
             "and the report's own files)"] if (reports / AUDIT_ZIP).exists() else []
    problems = _two_videos(reports, rel)
    if others:
        shown = ", ".join(others[:5]) + (f" and {len(others) - 5} more" if len(others) > 5 else "")
        problems.append(f"{rel}: {shown}: not a file the report stage writes there (report.md, report.html, "
                        "numbers.json, figures/), so nothing checks what it says")
    return problems, notes


def _two_videos(reports: Path, rel: str) -> list[str]:
    """render-best writes one video, under the name its record gives: a second one is a
    clip nothing checks, though its name is one the stage may write."""
    videos = [name for name in VIDEO_NAMES if (reports / "figures" / name).exists()]
    if len(videos) < 2:
        return []
    return [f"{rel}/figures: {', '.join(videos)}: two videos, but render-best writes one (the one "
            f"figures/best_run.json names), so nothing checks the other"]
