"""The two records made from the manifest or after it, which no hash binds and the
report's Evidence section shows: manifest.json (counts and sizes written from the manifest)
is made again from MANIFEST.sha256 and the files it lists, and verify.json (the pipeline's
verification) must say what this verification finds: passed, with as many files and runs."""

from __future__ import annotations

from pathlib import Path

from sacscale.evidence.manifest import MANIFEST_JSON, VERIFY_JSON, parse_manifest, summary
from sacscale.evidence.result import EvidenceStructureError, Verification, load_json, read_text, same_value


def manifest_json_problems(root: Path, manifest: Path) -> list[str]:
    """manifest.json against the summary of the manifest it was written from."""
    if not (root / MANIFEST_JSON).is_file():
        return []
    try:
        stored = load_json(root, MANIFEST_JSON)
        text = read_text(manifest, manifest.name)
    except EvidenceStructureError as exc:
        return [str(exc)]
    listed = parse_manifest(manifest, root)
    entries = [(digest, rel, (root / rel).stat().st_size) for rel, digest in listed.items() if (root / rel).is_file()]
    fresh = summary(entries, text)
    return [f"{MANIFEST_JSON}: {key} {str(stored.get(key))[:80]}, the manifest gives {str(fresh[key])[:80]}"
            for key in fresh if not same_value(stored.get(key), fresh[key])] + [
        f"{MANIFEST_JSON}: holds {key[:40]!r}, which is not written from the manifest" for key in stored
        if key not in fresh]


# what the pipeline's own verification, which runs before the report, says of it
PENDING_REPORT_CHECK = "report: not checked (the pipeline writes it after this verification)"
PROBLEM_LISTS = ("refused", "changed", "missing", "extra", "metrics", "records", "derived", "structure", "scope")


def verify_json_problems(root: Path, result: Verification, made_by_this_code: bool) -> list[str]:
    """verify.json against this verification: a set that verifies now was verified then with
    the same counts (the report shows them), and the record holds only what a verification
    writes, its verdict agreeing with its own lists. Its notes and what it says it covered
    are the words of the code that verified it then, which may be older; of a set made by this
    code (`made_by_this_code`), all its fields are there and its report was pending."""
    if not (root / VERIFY_JSON).is_file() or not result.ok:
        return []
    try:
        stored = load_json(root, VERIFY_JSON)
    except EvidenceStructureError as exc:
        return [str(exc)]
    now = {"ok": True, "files_checked": result.files_checked, "runs_checked": result.runs_checked}
    problems = [f"{VERIFY_JSON}: {key} {str(stored.get(key))[:40]}, this verification {value}"
                for key, value in now.items() if not same_value(stored.get(key), value)]
    written = result.as_dict()
    problems += [f"{VERIFY_JSON}: holds {key[:40]!r}, which a verification does not write" for key in stored
                 if key not in written]
    problems += [f"{VERIFY_JSON}: says it passed, yet lists {key} {str(stored[key])[:60]}" for key in PROBLEM_LISTS
                 if stored.get("ok") is True and stored.get(key)]
    if made_by_this_code:
        problems += [f"{VERIFY_JSON}: lacks {key!r}, which this code's verification writes" for key in written
                     if key not in stored]
        if "report_check" in stored and stored["report_check"] != PENDING_REPORT_CHECK:
            problems.append(f"{VERIFY_JSON}: report_check {str(stored['report_check'])[:60]!r}, where the "
                            f"pipeline's verification, which runs before the report, says {PENDING_REPORT_CHECK!r}")
    return problems
