"""Check a run set's evidence: re-hash against the manifest, recompute every run's metrics.

Problems are reported one per line, each naming the file (relative to the root) or the
run and figure:
  changed: runs/x/train.log (sha256 abc... in the manifest, def... now)
  missing: metrics/x.json
  extra: runs/x/notes.txt (not in the manifest)
  metric: x: steady_env_steps_per_s: stored 123.0, recomputed 456.0
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from sacscale.analysis.events import EventFileError
from sacscale.analysis.metrics import MetricError, analyze_run, differences
from sacscale.evidence.manifest import MANIFEST_NAME, ManifestError, evidence_files, parse_manifest, sha256_file


@dataclass
class Verification:
    root: str
    files_checked: int = 0
    runs_checked: int = 0
    changed: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    metrics: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.changed or self.missing or self.extra or self.metrics)

    def problems(self) -> list[str]:
        return (
            [f"changed: {p}" for p in self.changed]
            + [f"missing: {p}" for p in self.missing]
            + [f"extra: {p} (not in the manifest)" for p in self.extra]
            + [f"metric: {p}" for p in self.metrics]
        )

    def as_dict(self) -> dict:
        return {
            "root": self.root,
            "ok": self.ok,
            "files_checked": self.files_checked,
            "runs_checked": self.runs_checked,
            "changed": self.changed,
            "missing": self.missing,
            "extra": self.extra,
            "metrics": self.metrics,
        }


def check_files(root: Path, manifest: Path, result: Verification) -> None:
    listed = parse_manifest(manifest)
    present = set(evidence_files(root))
    for rel, digest in sorted(listed.items()):
        path = root / rel
        if rel not in present:
            result.missing.append(rel)
            continue
        now = sha256_file(path)
        if now != digest:
            result.changed.append(f"{rel} (sha256 {digest[:12]}... in the manifest, {now[:12]}... now)")
    result.extra.extend(sorted(present - set(listed)))
    result.files_checked = len(listed)


def check_metrics(root: Path, result: Verification, runs_dir: str = "runs", metrics_dir: str = "metrics") -> None:
    """Recompute each run's figures from its events and compare with metrics/{run}.json.

    Every run directory needs a metrics file and every metrics file a run directory."""
    runs = {p.name: p for p in sorted((root / runs_dir).glob("*")) if p.is_dir() and not p.name.startswith(".")}
    stored_files = {p.stem: p for p in sorted((root / metrics_dir).glob("*.json"))}
    for name in sorted(set(stored_files) - set(runs)):
        result.metrics.append(f"{name}: {metrics_dir}/{name}.json has no run directory {runs_dir}/{name}")
    for name, run_dir in runs.items():
        if name not in stored_files:
            result.metrics.append(f"{name}: no stored metrics ({metrics_dir}/{name}.json is missing)")
            continue
        result.runs_checked += 1
        try:
            stored = json.loads(stored_files[name].read_text())
        except json.JSONDecodeError as exc:
            result.metrics.append(f"{name}: {metrics_dir}/{name}.json is not valid JSON ({exc})")
            continue
        try:
            recomputed = analyze_run(run_dir)
        except (EventFileError, MetricError) as exc:
            result.metrics.append(f"{name}: cannot recompute: {exc}")
            continue
        result.metrics.extend(f"{name}: {d}" for d in differences(stored, recomputed))


def verify(root: str | Path, manifest: str | Path | None = None, recompute: bool = True) -> Verification:
    root = Path(root)
    manifest = Path(manifest) if manifest else root / MANIFEST_NAME
    result = Verification(root=str(root))
    if not root.is_dir():
        raise ManifestError(f"{root}: evidence root is missing")
    check_files(root, manifest, result)
    if recompute and (root / "runs").is_dir():
        check_metrics(root, result)
    return result
