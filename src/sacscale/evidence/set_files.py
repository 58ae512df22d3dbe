"""The files of a set of the current evidence format (evidence.json) in results/<set>/:
only what its stages write. verify checks those by name; any other file there (a README,
which a repository browser shows first, under any spelling) would pass unread, hashed into
the manifest, so each one is named, as in the report folder (report_files). A run's folder
is not held to a list: what it holds depends on the trainer and how the run ended. Older
sets keep what was committed beside their evidence (set_readme notes a README there).
runs/ itself holds only the run folders, and no README stands anywhere inside them (no
trainer writes one)."""

from __future__ import annotations

import os
from pathlib import Path

from sacscale.evidence.manifest import EXCLUDED
from sacscale.evidence.model_record import MODEL_FILE
from sacscale.evidence.scope import SCOPE_FILE
from sacscale.evidence.set_readme import is_readme
from sacscale.finished_sets import SET_RECORDS

# the reference rule's record (workflow/rules/reference.smk), written only by presets that plan it
REFERENCE_RECORD = "reference_env.json"
# the stages' records, the manifest's files (manifest.EXCLUDED) and the scope the manifest writes
TOP_FILES = frozenset({*SET_RECORDS, *EXCLUDED, SCOPE_FILE, REFERENCE_RECORD})
# the folders, and what each holds: a record per run (<run>.json), the model prepare-model saves
RUNS = "runs"
FOLDERS = {RUNS: "/", "metrics": ".json", "eval": ".json", "model": MODEL_FILE}  # "/": folders only
_MOST = 1000  # entries named at most: a folder holds a record per run


def _others(root: Path) -> list[str]:
    """Entries of the set's folder and record folders that no stage writes, relative."""
    others = []
    for entry in sorted(os.listdir(root)):
        path = root / entry
        if entry in FOLDERS and path.is_dir() and not path.is_symlink():
            others += [f"{entry}/{name}" for name in _folder_others(path, FOLDERS[entry])]
        elif entry not in FOLDERS and (entry not in TOP_FILES or not path.is_file() or path.is_symlink()):
            others.append(entry)  # a file where a folder belongs is named by verify's folder check
        if len(others) > _MOST:
            break
    return others


def _folder_others(folder: Path, holds: str | None) -> list[str]:
    """Entries of a record folder other than its files: `holds` is an ending (.json, after a
    run's name) or a whole name; "/" for runs/, whose entries are the run folders (each is
    not held to a list, but holds no README)."""
    if holds == "/":
        return _runs_others(folder)

    def written(name: str) -> bool:
        fits = name == holds or (holds.startswith(".") and name.endswith(holds) and len(name) > len(holds))
        return fits and (folder / name).is_file() and not (folder / name).is_symlink()
    return [name for name in sorted(os.listdir(folder)) if not written(name)]


def _runs_others(runs: Path) -> list[str]:
    """Entries of runs/ that are not run folders, and READMEs anywhere inside the run folders."""
    others = []
    for name in sorted(os.listdir(runs)):
        path = runs / name
        if not path.is_dir() or path.is_symlink():
            others.append(name)
            continue
        for folder, subfolders, files in os.walk(path):  # links are not followed
            others += [os.path.relpath(os.path.join(folder, f), runs) for f in sorted(files + subfolders)
                       if is_readme(f)]
    return others


def set_files_findings(root: Path) -> list[str]:
    """Problems: each file in a current-format set's folder that no stage writes."""
    if not root.is_dir():
        return []
    rel = f"results/{root.name}"
    return [f"{rel}/{name}: not a file any stage writes (a set of this evidence format holds only those), so "
            "nothing checks what it says" + ("; a repository browser shows it first" if is_readme(name) else "")
            for name in _others(root)]
