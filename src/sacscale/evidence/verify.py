"""Check a run set's evidence: every file against the manifest, everything derived recomputed.

In this order, and the first step opens no file:

1. the tree: symbolic links of any kind and anything that is not a regular file (FIFO,
   socket, device) under `results/S/` and `reports/S/` are refused, found with lstat
   only (nothing is followed or opened, so a FIFO cannot hang it); when any is found,
   verification stops there;
2. the files: re-hash against `MANIFEST.sha256` (changed, missing, extra);
3. the runs: every field of `metrics/{run}.json` recomputed from the run's event files;
4. the records (sets made by the pipeline, i.e. with a `plan.json`): the number of runs
   against the plan, and plan.json -> run.json (its resolved config and its command,
   parsed by the trainer's own parser) -> train_meta.json -> metrics agree on seed,
   iterations, devices, CPU pools, world size, model (hash) and code commit;
5. the summary: `summary.json` and `summary.csv` recomputed from the metrics and the plan;
6. the report: `reports/S/report.md`'s numbers: its tables and headline ratios are
   regenerated from the recomputed summary and must appear in it verbatim (the report
   embeds this verification's own verdict, so it cannot be in the manifest it checks).

A field that newer code derives but an older set never stored is not a failure: it is
listed under `notes` as "not recorded by this older set". A file that is not valid
JSON, or JSON of the wrong shape, is a named problem, not a traceback.

Problems are reported one per line, each naming the file (relative to the root) or the
run and figure:
  refused: runs/x/tb/rank1 (symbolic link)
  changed: runs/x/train.log (sha256 abc... in the manifest, def... now)
  missing: metrics/x.json
  extra: runs/x/notes.txt (not in the manifest)
  metric: x: steady_env_steps_per_s: stored 123.0, recomputed 456.0
  record: x: run.json seed 2, plan.json seed 1
  derived: summary.json: configs.n1.mean: stored 1.0, recomputed 2.0
  structure: metrics/x.json: not a JSON object (a list)
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from sacscale.analysis.aggregate import runs_table, summarize
from sacscale.analysis.events import EventFileError
from sacscale.analysis.metrics import MetricError, analyze_run
from sacscale.evidence import binding, scope
from sacscale.evidence.manifest import (
    MANIFEST_NAME, ManifestError, evidence_files, irregular_files, parse_manifest, sha256_file,
)
from sacscale.pipeline.runplan import PlanError, check_override, check_reference_override
from sacscale.train.options import build_parser
from sacscale.trainers.reference_options import build_parser as reference_parser

REL_TOL = 1e-9
OLDER = "not recorded by this older set"
# summary.json's meta: the plan fields the workflow passes to aggregate (common.smk)
SUMMARY_META = ("run_set", "preset", "preset_reason", "repeats", "iterations", "order", "schedule",
                "execution_order")


class EvidenceStructureError(ValueError):
    """A JSON evidence file of the wrong shape; the message names the file and the field."""


@dataclass
class Verification:
    root: str
    files_checked: int = 0
    bytes_hashed: int = 0
    runs_checked: int = 0
    refused: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    metrics: list[str] = field(default_factory=list)
    records: list[str] = field(default_factory=list)
    derived: list[str] = field(default_factory=list)
    structure: list[str] = field(default_factory=list)
    scope: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)
    covered: list[str] = field(default_factory=list)  # what is hashed, what is left out by design

    @property
    def ok(self) -> bool:
        return not (self.refused or self.changed or self.missing or self.extra or self.metrics
                    or self.records or self.derived or self.structure or self.scope)

    def problems(self) -> list[str]:
        return (
            [f"refused: {p}" for p in self.refused]
            + [f"changed: {p}" for p in self.changed]
            + [f"missing: {p}" for p in self.missing]
            + [f"extra: {p} (not in the manifest)" for p in self.extra]
            + [f"metric: {p}" for p in self.metrics]
            + [f"record: {p}" for p in self.records]
            + [f"derived: {p}" for p in self.derived]
            + [f"structure: {p}" for p in self.structure]
            + [f"scope: {p}" for p in self.scope]
        )

    def as_dict(self) -> dict:
        return {
            "root": self.root,
            "ok": self.ok,
            "files_checked": self.files_checked,
            "runs_checked": self.runs_checked,
            "checked": self.checked,
            "refused": self.refused,
            "changed": self.changed,
            "missing": self.missing,
            "extra": self.extra,
            "metrics": self.metrics,
            "records": self.records,
            "derived": self.derived,
            "structure": self.structure,
            "scope": self.scope,
            "notes": self.notes,
            "covered": self.covered,
        }


# --- reading -----------------------------------------------------------------------------

def load_json(root: Path, rel: str, kind: type = dict):
    """The JSON value of root/rel, which must be a `kind`; EvidenceStructureError otherwise."""
    try:
        data = json.loads((root / rel).read_text())
    except FileNotFoundError:
        raise EvidenceStructureError(f"{rel}: missing") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EvidenceStructureError(f"{rel}: not valid JSON ({exc})") from None
    if not isinstance(data, kind):
        raise EvidenceStructureError(f"{rel}: not a JSON {kind.__name__} (a {type(data).__name__})")
    return data


def _get(data: dict, rel: str, *keys, kind: type | tuple = object):
    """data[k1][k2]... of the right type, or EvidenceStructureError naming file and field."""
    value = data
    for i, key in enumerate(keys):
        if not isinstance(value, dict) or key not in value:
            raise EvidenceStructureError(f"{rel}: no field {'.'.join(map(str, keys[: i + 1]))}")
        value = value[key]
    if not isinstance(value, kind):
        raise EvidenceStructureError(f"{rel}: field {'.'.join(map(str, keys))} is a {type(value).__name__}")
    return value


# --- comparing -----------------------------------------------------------------------------

def _number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def deep_differences(stored, recomputed, path: str = "") -> tuple[list[str], list[str]]:
    """(problems, notes) between a stored and a recomputed JSON value: every field, numbers
    equal up to float noise; a field only the recomputation has is a note (older set)."""
    problems: list[str] = []
    notes: list[str] = []
    where = path or "(top level)"
    if isinstance(stored, dict) and isinstance(recomputed, dict):
        for key in recomputed:
            sub = f"{path}.{key}" if path else str(key)
            if key not in stored:
                notes.append(f"{sub}: {OLDER}")
                continue
            p, n = deep_differences(stored[key], recomputed[key], sub)
            problems += p
            notes += n
        for key in stored:
            if key not in recomputed:
                problems.append(f"{path + '.' if path else ''}{key}: stored, but not derived from the evidence")
    elif isinstance(stored, list) and isinstance(recomputed, list):
        if len(stored) != len(recomputed):
            problems.append(f"{where}: stored {len(stored)} entries, recomputed {len(recomputed)}")
        else:
            for i, (a, b) in enumerate(zip(stored, recomputed)):
                p, n = deep_differences(a, b, f"{path}[{i}]")
                problems += p
                notes += n
    elif _number(stored) and _number(recomputed):
        a, b = float(stored), float(recomputed)
        same = (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=REL_TOL, abs_tol=1e-12)
        if not same:
            problems.append(f"{where}: stored {stored!r}, recomputed {recomputed!r}")
    elif stored != recomputed:
        problems.append(f"{where}: stored {_short(stored)}, recomputed {_short(recomputed)}")
    return problems, notes


def _short(value) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 120 else text[:117] + "..."


# --- 1. the tree, 2. the files ------------------------------------------------------------------

def reports_dir(root: Path) -> Path | None:
    """reports/S/ for results/S/ (None when the root is not laid out so)."""
    if root.parent.name != "results":
        return None
    return root.parent.parent / "reports" / root.name


def check_tree(root: Path, result: Verification) -> None:
    result.refused.extend(irregular_files(root))
    reports = reports_dir(root)
    if reports is not None and (reports.is_dir() or reports.is_symlink()):
        result.refused.extend(f"../../reports/{root.name}/{p}" for p in irregular_files(reports))


def check_files(root: Path, manifest: Path, result: Verification) -> None:
    listed = parse_manifest(manifest)
    present = set(evidence_files(root))
    for rel, digest in sorted(listed.items()):
        path = root / rel
        if rel not in present:
            result.missing.append(rel)
            continue
        now = sha256_file(path)
        result.bytes_hashed += path.stat().st_size
        if now != digest:
            result.changed.append(f"{rel} (sha256 {digest[:12]}... in the manifest, {now[:12]}... now)")
    result.extra.extend(sorted(present - set(listed)))
    result.files_checked = len(listed)


# --- 3. the runs' metrics ------------------------------------------------------------------------

def current_format(root: Path) -> bool:
    """A set made by this pipeline version (its plan.json records the schedule): every field
    the current code derives must be there; a missing one is a problem, not a note."""
    try:
        plan = load_json(root, "plan.json")
    except EvidenceStructureError:
        return False
    return "schedule" in plan


def _split(result: Verification, notes: list[str], strict: bool, target: list[str]) -> None:
    (target if strict else result.notes).extend(notes)


def check_metrics(root: Path, result: Verification, runs_dir: str = "runs", metrics_dir: str = "metrics",
                  strict: bool = False) -> dict:
    """Recompute each run's metrics from its events and compare every field with
    metrics/{run}.json. Every run directory needs a metrics file and every metrics file a
    run directory. Returns `{run: stored metrics}` of the runs that recompute."""
    runs = {p.name: p for p in sorted((root / runs_dir).glob("*")) if p.is_dir() and not p.name.startswith(".")}
    stored_files = {p.stem: p for p in sorted((root / metrics_dir).glob("*.json"))}
    for name in sorted(set(stored_files) - set(runs)):
        result.metrics.append(f"{name}: {metrics_dir}/{name}.json has no run directory {runs_dir}/{name}")
    good = {}
    for name, run_dir in runs.items():
        if name not in stored_files:
            result.metrics.append(f"{name}: no stored metrics ({metrics_dir}/{name}.json is missing)")
            continue
        result.runs_checked += 1
        try:
            stored = load_json(root, f"{metrics_dir}/{name}.json")
        except EvidenceStructureError as exc:
            result.structure.append(str(exc))
            continue
        try:
            recomputed = analyze_run(run_dir)
        except (EventFileError, MetricError) as exc:
            result.metrics.append(f"{name}: cannot recompute: {exc}")
            continue
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            # e.g. a run.json of the wrong shape: named, not a traceback
            result.structure.append(f"{runs_dir}/{name}: cannot recompute its metrics: unexpected structure "
                                    f"({type(exc).__name__}: {exc})")
            continue
        problems, notes = deep_differences(stored, recomputed)
        result.metrics.extend(f"{name}: {p}" for p in problems)
        _split(result, [f"metrics/{name}.json: {n}" for n in notes], strict, result.metrics)
        if not problems and not (strict and notes):
            good[name] = stored
    return good


# --- 4. the records ----------------------------------------------------------------------------------

def _trainer_args(command: list, rel: str):
    """The run's `sacscale train` (or `sacscale train-reference`, the reference trainer)
    command parsed by that command's own parser."""
    if not (isinstance(command, list) and command[:2] in (["sacscale", "train"], ["sacscale", "train-reference"])
            and all(isinstance(a, str) for a in command)):
        raise EvidenceStructureError(f"{rel}: command is not a `sacscale train ...` argument list")
    parser = build_parser() if command[1] == "train" else reference_parser()
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            return parser.parse_args(command[2:])
    except SystemExit:
        msg = err.getvalue().strip().splitlines()[-1:] or ["unparsable"]
        raise EvidenceStructureError(f"{rel}: command does not parse with the trainer's parser: {msg[0]}") from None


def _agree(result: Verification, run: str, facts: dict[str, list[tuple[str, object]]], strict: bool = False) -> None:
    """facts: {quantity: [(source, value), ...]}; every recorded value must equal the first.
    A value a source does not record: a note, or with `strict` (a current set) a problem."""
    for quantity, sources in facts.items():
        recorded = [(src, val) for src, val in sources if val is not _ABSENT]
        for src, val in sources:
            if val is _ABSENT:
                (result.records if strict else result.notes).append(f"{run}: {quantity} in {src}: {OLDER}")
        if not recorded:
            continue
        first_src, first = recorded[0]
        for src, val in recorded[1:]:
            if val != first:
                result.records.append(f"{run}: {quantity}: {first_src} says {first!r}, {src} says {val!r}")


_ABSENT = object()


def _opt(data, *keys):
    for key in keys:
        if not isinstance(data, dict) or key not in data:
            return _ABSENT
        data = data[key]
    return data


def _where(record: dict):
    """The host a record was made on (and its SLURM node, inside a job), or _ABSENT."""
    host = _opt(record, "host", "name")
    if host is _ABSENT:
        return _ABSENT
    node = _opt(record, "host", "slurm", "SLURMD_NODENAME")
    return f"host {host!r}" + ("" if node is _ABSENT else f" (SLURM node {node!r})")


def check_records(root: Path, plan: dict, result: Verification, strict: bool = False) -> None:
    rel_plan = "plan.json"
    planned = _get(plan, rel_plan, "runs", kind=list)
    configs = _get(plan, rel_plan, "run_configs", kind=dict)
    iterations = _get(plan, rel_plan, "iterations", kind=int)
    names = []
    for i, entry in enumerate(planned):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise EvidenceStructureError(f"{rel_plan}: runs[{i}] has no name")
        names.append(entry["name"])
    present = sorted(p.name for p in (root / "runs").glob("*") if p.is_dir() and not p.name.startswith("."))
    absent = [n for n in names if n not in present]
    if absent:
        result.records.append(f"runs: plan.json lists {len(names)} runs, {len(names) - len(absent)} have "
                              f"evidence; missing: {', '.join(absent)}")
    unplanned = sorted(set(present) - set(names))
    if unplanned:
        result.records.append(f"runs: not in plan.json: {', '.join(unplanned)}")

    model_hash = _model_hash(root, plan, result)
    env_commit = env_host = _ABSENT
    if (root / "environment.json").is_file():
        env = load_json(root, "environment.json")
        env_commit = _opt(env, "project", "commit")
        env_host = _where(env)

    for entry in planned:
        name = entry["name"]
        if name not in present:
            continue
        rc = configs.get(entry.get("config"))
        if not isinstance(rc, dict):
            raise EvidenceStructureError(f"{rel_plan}: runs entry {name}: config {entry.get('config')!r} has no run_configs entry")
        rel_run = f"runs/{name}/run.json"
        run = load_json(root, rel_run)
        resolved = _get(run, rel_run, "resolved_config", kind=dict)
        args = _trainer_args(run.get("command"), rel_run)
        meta_rel = f"runs/{name}/train_meta.json"
        meta = load_json(root, meta_rel) if (root / meta_rel).is_file() else {}
        mcfg = meta.get("config") if isinstance(meta.get("config"), dict) else {}
        metrics_rel = f"metrics/{name}.json"
        metrics = load_json(root, metrics_rel) if (root / metrics_rel).is_file() else {}
        pools = rc.get("cpu_pools")
        model_arg = getattr(args, "model", None)
        reference = run.get("command", [None, None])[1] == "train-reference"
        command_pools = args.collector_cpu_ids
        if reference and command_pools == "":
            command_pools = "auto"  # train-reference: empty means the reference's own default
        if reference and mcfg.get("collector_cpu_ids") == "":
            mcfg = {**mcfg, "collector_cpu_ids": "auto"}
        _agree(result, name, {
            "seed": [("plan.json", entry.get("seed")), ("run.json", run.get("seed", _ABSENT)),
                     ("run.json resolved_config", resolved.get("seed", _ABSENT)),
                     ("run.json command", args.seed), ("train_meta.json", mcfg.get("seed", _ABSENT))],
            "iterations": [("plan.json", iterations), ("run.json resolved_config", resolved.get("iterations", _ABSENT)),
                           ("run.json command", args.iterations),
                           ("train_meta.json", mcfg.get("iterations", _ABSENT))],
            "configuration": [("plan.json", entry.get("config")), ("run.json resolved_config", resolved.get("config", _ABSENT)),
                              ("metrics", metrics.get("config", _ABSENT))],
            "repeat": [("plan.json", entry.get("repeat")), ("run.json resolved_config", resolved.get("repeat", _ABSENT)),
                       ("metrics", metrics.get("repeat", _ABSENT))],
            "devices": [("plan.json", rc.get("devices")), ("run.json resolved_config", resolved.get("devices", _ABSENT)),
                        ("run.json command", args.devices), ("train_meta.json", mcfg.get("devices", _ABSENT)),
                        ("metrics", metrics.get("devices", _ABSENT))],
            "CPU pools": [("plan.json", pools), ("run.json resolved_config", resolved.get("cpu_pools", _ABSENT)),
                          ("run.json command", command_pools),
                          ("train_meta.json", mcfg.get("collector_cpu_ids", _ABSENT))],
            "envs per rank": [("plan.json", rc.get("num_envs")), ("run.json command", args.num_envs),
                              ("train_meta.json", mcfg.get("num_envs", _ABSENT))],
            "world size": [("plan.json", rc.get("world_size")),
                           ("run.json resolved_config", resolved.get("world_size", _ABSENT)),
                           ("train_meta.json", meta.get("world_size", _ABSENT)),
                           ("metrics", metrics.get("world_size", _ABSENT))],
            # the reference trainer builds its task from its own package: no model file
            **({} if reference else {"model file": [("run.json command", model_arg),
                                                    ("train_meta.json", mcfg.get("model", _ABSENT))]}),
            "code commit": [("environment.json", env_commit), ("run.json", _opt(run, "code", "commit"))],
        }, strict)
        # the environment describes the runs only if it was recorded where they ran (sets
        # recorded before hosts were recorded have neither)
        run_host = _where(run)
        if env_host is not _ABSENT and run_host is not _ABSENT and env_host != run_host:
            result.records.append(f"{name}: host: environment.json was recorded on {env_host}, "
                                  f"the run ran on {run_host}")
        if model_hash is not None and model_arg is not None:
            if not str(model_arg).endswith(f"{root.name}/model/g1_walk_flat.mjb"):
                result.records.append(f"{name}: the run's --model {model_arg} is not this set's hashed model "
                                      f"(model/g1_walk_flat.mjb)")
        for key, value in (resolved.get("overrides") or {}).items():
            try:
                (check_reference_override if reference else check_override)(str(key), value,
                                                                            f"{rel_run}: overrides.{key}")
            except PlanError as exc:
                result.records.append(f"{name}: {exc}")
        if meta and meta.get("status", "completed") != "completed":
            result.records.append(f"{name}: train_meta.json status {meta.get('status')!r}, not 'completed'")


def _model_hash(root: Path, plan: dict, result: Verification) -> str | None:
    """The set's model hash, checked against the model file and the plan's pin."""
    if not (root / "model.json").is_file():
        return None
    model = load_json(root, "model.json")
    stored = model.get("sha256")
    path = root / "model" / str(model.get("file", "g1_walk_flat.mjb"))
    if stored is None:
        result.notes.append(f"model.json: sha256 {OLDER}")
        return None
    if path.is_file() and sha256_file(path) != stored:
        result.records.append(f"model: model.json sha256 {stored[:12]}..., model/{path.name} hashes to "
                              f"{sha256_file(path)[:12]}...")
    pin = (plan.get("model") or {}).get("expect_sha256")
    if pin and pin != stored:
        result.records.append(f"model: plan.json pins {pin[:12]}..., model.json records {stored[:12]}...")
    return stored


# --- 5. the summary, 6. the report -------------------------------------------------------------------

def recompute_summary(plan: dict, metrics: list[dict]) -> dict:
    meta = {k: plan[k] for k in SUMMARY_META if k in plan}
    pairs = [tuple(p) for p in plan.get("pairs") or []] or None
    return summarize(metrics, list(plan["order"]), pairs, meta=meta)


def check_summary(root: Path, plan: dict, metrics: list[dict], result: Verification) -> tuple[dict, bool] | None:
    """(recomputed summary, whether the stored one is of the current format) or None."""
    if not (root / "summary.json").is_file():
        return None
    stored = load_json(root, "summary.json")
    current = "schedule" in plan
    recomputed = recompute_summary(plan, metrics)
    problems, notes = deep_differences(stored, recomputed)
    result.derived.extend(f"summary.json: {p}" for p in problems)
    _split(result, [f"summary.json: {n}" for n in notes], current, result.derived)
    if (root / "summary.csv").is_file():
        _check_csv(root, runs_table(metrics), result, current)
    elif current:
        result.derived.append("summary.csv: missing (summary.json is there)")
    return recomputed, current


def _check_csv(root: Path, table, result: Verification, strict: bool = False) -> None:
    try:
        stored = pd.read_csv(root / "summary.csv", keep_default_na=False, dtype=str)
    except (ValueError, UnicodeDecodeError) as exc:
        result.structure.append(f"summary.csv: not a readable CSV ({exc})")
        return
    fresh = pd.read_csv(io.StringIO(table.to_csv(index=False)), keep_default_na=False, dtype=str)
    _split(result, [f"summary.csv: column {col}: {OLDER}" for col in fresh.columns if col not in stored.columns],
           strict, result.derived)
    for col in stored.columns:
        if col not in fresh.columns:
            result.derived.append(f"summary.csv: column {col}: stored, but not derived from the metrics")
    if len(stored) != len(fresh):
        result.derived.append(f"summary.csv: {len(stored)} rows stored, {len(fresh)} runs in the metrics")
        return
    for col in [c for c in fresh.columns if c in stored.columns]:
        for i, (a, b) in enumerate(zip(stored[col], fresh[col])):
            if a == b:
                continue
            try:
                if math.isclose(float(a), float(b), rel_tol=REL_TOL, abs_tol=1e-12):
                    continue
            except ValueError:
                pass
            result.derived.append(f"summary.csv: row {i + 1} ({fresh['run'][i]}) {col}: stored {a!r}, recomputed {b!r}")


def check_report(root: Path, summary: dict, metrics: list[dict], result: Verification, current: bool = True) -> None:
    from sacscale.report.build import number_blocks

    reports = reports_dir(root)
    if reports is None or not (reports / "report.md").is_file():
        return
    text = (reports / "report.md").read_text(errors="replace")
    rel = f"reports/{root.name}/report.md"
    for title, renderings, required in number_blocks(summary, metrics, current):
        if any(block in text for block in renderings):  # as the report writes it now, or wrote it before
            continue
        if isinstance(required, str):  # a part added later: required where the report has its heading
            required = required in text.splitlines()
        if required:
            first = renderings[0].strip().splitlines()[:1]
            result.derived.append(f"{rel}: {title} does not match the evidence (regenerated, it reads: "
                                  f"{first[0] if first else ''!r} ...)")
        else:
            result.notes.append(f"{rel}: {title}: {OLDER}")
    result.checked.append(rel)


def canonical_root(root: str | Path) -> Path:
    """The set's one name: absolute, `..` and `.` gone, links in the path resolved. Every
    spelling of a set (relative, with `..`, through a link) is checked as this path, so none
    can skip the report or the tree checks that depend on where the set lies. Only the path
    that names the set is resolved: inside it, links are refused (check_tree)."""
    path = Path(root)
    if not path.exists() and not path.is_symlink():
        raise ManifestError(f"{root}: evidence root is missing")
    canonical = Path(os.path.realpath(path))
    if not canonical.is_dir():
        raise ManifestError(f"{root}: evidence root is not a directory ({canonical})")
    return canonical


def report_expected(root: Path) -> bool:
    """A set the pipeline finished has a report: it made summary.json (hashed) and the report
    is made from it. Its absence is then a problem, not a skipped check."""
    return (root / "plan.json").is_file() and (root / "summary.json").is_file()


def check_report_present(root: Path, result: Verification, report_pending: bool) -> bool:
    """Whether reports/S/report.md is there to be checked; a missing report of a set that has
    one is a problem. `report_pending`: the pipeline's own verification, which runs before
    the report is written (the report embeds its verdict)."""
    reports = reports_dir(root)
    if reports is not None and (reports / "report.md").is_file():
        return True
    if not report_expected(root):
        return False
    where = f"reports/{root.name}/report.md" if reports is not None else (
        f"the report (the set lies in {root.parent}, not in a results/ folder beside reports/)")
    if report_pending:
        result.notes.append(f"{where}: not checked: the pipeline writes it after this verification")
    else:
        result.missing.append(f"{where} (the set's summary.json has a report: it was deleted, or the pipeline "
                              f"never got to write it)")
    return False


def check_bindings(root: Path, plan: dict | None, result: Verification) -> None:
    """Each run's events and evaluation belong to that run (sacscale.evidence.binding)."""
    runs = sorted(p.name for p in (root / "runs").glob("*") if p.is_dir() and not p.name.startswith(".")) \
        if (root / "runs").is_dir() else []
    # the binding fields are required from the sets made under the evidence format that
    # requires them (evidence.json); older sets get a note for each one they lack
    out = binding.Findings(scope.format_of(root) >= scope.FORMAT)
    binding.check_events(root, runs, out)
    model_sha = None
    if (root / "model.json").is_file():
        model = load_json(root, "model.json")
        model_sha = model.get("sha256") if isinstance(model.get("sha256"), str) else None
    iterations = plan.get("iterations") if isinstance(plan, dict) and isinstance(plan.get("iterations"), int) else None
    binding.check_evaluations(root, runs, model_sha, iterations, scope.left_out_hashes(root), out,
                               by_name=plan is not None)
    result.records.extend(out.problems)
    result.notes.extend(out.notes)
    if out.notes:  # said where the verdict is read, not only among the notes
        result.covered.append(f"bound only as far as the records go: {len(out.notes)} binding field(s) of runs and "
                              f"evaluations that this older set's records lack (--notes lists them)")


def check_coverage(root: Path, result: Verification) -> None:
    """What the manifest covers and what it leaves out by design; the size budget."""
    result.covered.extend(scope.describe(root, result.files_checked, result.bytes_hashed))
    problems, lines = scope.check_scope(root)
    result.scope.extend(problems)
    result.covered.extend(lines)


def verify(root: str | Path, manifest: str | Path | None = None, recompute: bool = True,
           report_pending: bool = False) -> Verification:
    root = canonical_root(root)
    manifest = Path(manifest) if manifest else root / MANIFEST_NAME
    result = Verification(root=str(root))
    check_tree(root, result)
    if result.refused:
        return result  # nothing is opened in a tree that holds links or special files
    check_files(root, manifest, result)
    check_coverage(root, result)
    if not recompute:
        return result
    strict = current_format(root) if (root / "plan.json").is_file() else False
    good = check_metrics(root, result, strict=strict) if (root / "runs").is_dir() else {}
    if not (root / "plan.json").is_file():
        check_bindings(root, None, result)
        return result  # not made by the pipeline: no plan to cross-check against
    try:
        plan = load_json(root, "plan.json")
        check_records(root, plan, result, strict)
        check_bindings(root, plan, result)
        names = [r["name"] for r in plan["runs"] if r["name"] in good]
        recomputed = check_summary(root, plan, [good[n] for n in names], result)
        if recomputed is not None:
            result.checked.append("summary.json")
            if check_report_present(root, result, report_pending):
                check_report(root, recomputed[0], [good[n] for n in names], result, current=recomputed[1])
    except EvidenceStructureError as exc:
        result.structure.append(str(exc))
    except (KeyError, TypeError, AttributeError, IndexError, ValueError) as exc:
        # a JSON field of an unexpected shape deep inside a record
        result.structure.append(f"unexpected structure in the set's JSON ({type(exc).__name__}: {exc})")
    return result
