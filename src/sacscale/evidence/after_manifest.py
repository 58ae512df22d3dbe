"""The two records made from the manifest or after it, which no hash binds and the
report's Evidence section shows: manifest.json (counts and sizes written from the manifest)
is made again from MANIFEST.sha256 and the files it lists, and verify.json (the pipeline's
verification) must say what this verification finds: passed, with as many files and runs."""

from __future__ import annotations

from pathlib import Path

from sacscale.evidence.manifest import MANIFEST_JSON, VERIFY_JSON, parse_manifest, summary
from sacscale.evidence.result import EvidenceStructureError, Verification, load_json, read_text


def manifest_json_problems(root: Path, manifest: Path) -> list[str]:
    """manifest.json against the summary of the manifest it was written from."""
    if not (root / MANIFEST_JSON).is_file():
        return []
    try:
        stored = load_json(root, MANIFEST_JSON)
        text = read_text(manifest, manifest.name)
    except EvidenceStructureError as exc:
        return [str(exc)]
    listed = parse_manifest(manifest)
    entries = [(digest, rel, (root / rel).stat().st_size) for rel, digest in listed.items() if (root / rel).is_file()]
    fresh = summary(entries, text)
    return [f"{MANIFEST_JSON}: {key} {str(stored.get(key))[:80]}, the manifest gives {str(fresh[key])[:80]}"
            for key in fresh if stored.get(key) != fresh[key]]


def verify_json_problems(root: Path, result: Verification) -> list[str]:
    """verify.json against this verification: a set that verifies now was verified then with
    the same counts (the report shows them)."""
    if not (root / VERIFY_JSON).is_file() or not result.ok:
        return []
    try:
        stored = load_json(root, VERIFY_JSON)
    except EvidenceStructureError as exc:
        return [str(exc)]
    now = {"ok": True, "files_checked": result.files_checked, "runs_checked": result.runs_checked}
    return [f"{VERIFY_JSON}: {key} {str(stored.get(key))[:40]}, this verification {value}" for key, value in now.items()
            if stored.get(key) != value]
