"""Outputs that would land in a finished run set's evidence, for every command's output options.

A run set is finished once its manifest is made (results/<set>/MANIFEST.sha256): from then
on its files under results/<set>/ and reports/<set>/ are evidence, and a command's output
there replaced a record verify reads (`aggregate --json results/S/summary.json`) or was one
file too many. Before the manifest the pipeline writes the set's files itself (metrics,
summary, ...), and Snakemake may run a rule again: those writes are not judged here. After
it, the pipeline still writes a few files, each by one command at one name (`_AFTER_MANIFEST`).
"""

from __future__ import annotations

import os
from pathlib import Path

# where run sets live: results/<set> (its evidence) and reports/<set> (its report)
_SET_FOLDERS = ("results", "reports")
MANIFEST = "MANIFEST.sha256"

# (command, option, folder, name inside the set's folder): what the pipeline writes once the
# manifest is made (verify.json, the report, the best run's video), or the manifest itself made
# again; '.' is the set's folder itself (`report --run-set S --output-dir reports/S`)
_AFTER_MANIFEST = {
    ("verify", "--output", "results", "verify.json"),
    ("manifest", "--output", "results", MANIFEST),
    ("manifest", "--json", "results", "manifest.json"),
    ("report", "--output-dir", "reports", "."),
    ("report", "--output-md", "reports", "report.md"),
    ("report", "--output-html", "reports", "report.html"),
    ("report", "--figures-dir", "reports", "figures"),
    ("render-best", "--output", "reports", "figures/best_run.webp"),
    ("render-best", "--record", "reports", "figures/best_run.json"),
}


def _where(value: str | os.PathLike, names_folder: bool) -> Path:
    """Where an output goes, as the kernel reaches it: a folder it fills resolved whole; a file's
    folder resolved, not its name (an output that is a link is replaced, not written through)."""
    path = Path(value)
    if names_folder:
        return path.resolve()
    return path.parent.resolve() / path.name


def finished_set_problem(command: str, option: str, value: str | os.PathLike, names_folder: bool) -> str | None:
    """Why `command`'s output `option` `value` may not be written: it lies in results/<set>/ or
    reports/<set>/ of a set whose manifest is made, at a name the pipeline does not write
    there itself. None where it may."""
    try:
        where = _where(value, names_folder)
    except (OSError, RuntimeError):  # a link loop: the command names it
        return None
    set_folder = next((f for f in (where, *where.parents) if f.parent.name in _SET_FOLDERS), None)
    if set_folder is None:
        return None
    manifest = set_folder.parent.parent / "results" / set_folder.name / MANIFEST
    if not manifest.is_file():
        return None  # a set being made: the pipeline writes its files
    inside = f"{set_folder.parent.name}/{set_folder.name}"
    if (command, option, set_folder.parent.name, where.relative_to(set_folder).as_posix()) in _AFTER_MANIFEST:
        return None
    return (f"{value} is inside {inside}, a finished run set (it has results/{set_folder.name}/{MANIFEST}), "
            "whose evidence is not rewritten or added to; write it elsewhere")
