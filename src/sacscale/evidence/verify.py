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
6. the report (sacscale.evidence.report_check): the quantities its tables show are
   recomputed from the metrics and the summary; `reports/S/numbers.json` (where the report
   stage wrote it) is compared with them number by number, and every numeric cell of the
   tables a renderer shows of `report.md` must be its quantity at the precision shown; where
   the set records this code's page format, both pages are compared line by line with the
   page composed again from the evidence (sacscale.evidence.report_page). The report embeds
   this verification's own verdict, so it cannot be in the manifest it checks. The probe's
   record is checked against its own numbers (sacscale.evidence.probe_record).
7. the reads: every file of the set and of reports/S has the identity (inode, size, mtime,
   ctime) it had before step 2; one swapped or written meanwhile fails the verdict, since a
   later check may have read other bytes than the ones hashed (sacscale.evidence.read_identity).

A field that newer code derives but an older set never stored is not a failure: it is
listed under `notes` as "not recorded by this older set". In a set made by this code every
field this code writes and a derivation reads must be there (sacscale.evidence.required_fields).
A file that is not valid JSON, or JSON of the wrong shape, is a named problem, not a traceback.

Problems are reported one per line, each naming the file (relative to the root) or the
run and figure:
  refused: runs/x/tb/rank1 (symbolic link)
  changed: runs/x/train.log (sha256 abc... in the manifest, def... now)
  changed while verify read it: runs/x/tb/rank0/F (verify again when nothing writes the set)
  missing: metrics/x.json
  extra: runs/x/notes.txt (not in the manifest)
  metric: x: steady_env_steps_per_s: stored 123.0, recomputed 456.0
  record: x: run.json seed 2, plan.json seed 1
  derived: summary.json: configs.n1.mean: stored 1.0, recomputed 2.0
  derived: reports/S/report.md: the ratio table, row 'n2 / n1', column 'of means': shows '1.800x', ...
  structure: metrics/x.json: not a JSON object (a list)
"""

from __future__ import annotations

import os
import traceback
from pathlib import Path

from sacscale.analysis.events import EventFileError
from sacscale.analysis.metrics import MetricError, analyze_run
from sacscale.evidence import binding, scope
from sacscale.evidence.after_manifest import manifest_json_problems, verify_json_problems
from sacscale.evidence.derived import check_summary, recompute_summary
from sacscale.evidence.logged_rate import logged_rate_problems
from sacscale.evidence.manifest import (
    MANIFEST_NAME, evidence_files, irregular_files, parse_manifest, sha256_file, shown_path,
)
from sacscale.evidence.probe_overrides import learner_override_findings
from sacscale.evidence.probe_record import check_probe_record
from sacscale.evidence.read_identity import changed_between, identities
from sacscale.evidence.records import check_records
from sacscale.evidence.required_fields import absent_field_problems
from sacscale.evidence.report_check import check_report, check_report_present
from sacscale.evidence.result import (
    EvidenceStructureError, Verification, deep_differences, load_json, out_of_memory_loading, split_notes,
    while_loading)
from sacscale.evidence.set_made import made_by_this_code
from sacscale.evidence.set_owners import owner_notes
from sacscale.evidence.set_files import set_files_findings
from sacscale.evidence.set_readme import readme_findings
from sacscale.evidence.set_root import canonical_root, refuse_not_a_set, reports_dir
from sacscale.evidence.written_keys import unwritten_key_findings
from sacscale.report.page_format import PAGE_FORMATS_WRITTEN
from sacscale.usage import SILENT, StageLines

__all__ = ["EvidenceStructureError", "Verification", "canonical_root", "check_report", "recompute_summary", "verify"]


# --- 1. the tree, 2. the files ------------------------------------------------------------------

def check_tree(root: Path, result: Verification) -> None:
    result.refused.extend(irregular_files(root))
    reports = reports_dir(root)
    if reports is not None and reports.parent.is_symlink():  # as a link at reports/S, or results/
        result.refused.append(f"../../reports (symbolic link: the report of {root.name} is not in this checkout)")
    if reports is not None and (reports.is_dir() or reports.is_symlink()):
        result.refused.extend(f"../../reports/{root.name}/{p}" for p in irregular_files(reports))


def _hash_limit(root: Path) -> int | None:
    """A set of the budget's format holds no file larger than its whole budget; one that
    does is named, not hashed (a sparse file of terabytes would take hours to read)."""
    try:
        held = scope.read_scope(root)
    except scope.ScopeError:
        return None  # named by check_scope
    return scope.budget_of(held) if held else None


_SPARSE_FROM = 64 * 2**20


def _sparse(path: Path, size: int) -> bool:
    """A large file with a hole: in a set made before the budget (no size bound to name it
    by) a sparse file of terabytes would still be read whole, at about 1 s a GB. No stage
    writes one, and git checks files out without holes."""
    if size < _SPARSE_FROM:
        return False
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return False  # named when it is hashed
    try:
        return os.lseek(fd, 0, os.SEEK_HOLE) < size
    except OSError:  # a file system that does not say
        return os.fstat(fd).st_blocks * 512 < size // 2
    finally:
        os.close(fd)


def check_files(root: Path, manifest: Path, result: Verification, progress: StageLines = SILENT) -> None:
    listed = parse_manifest(manifest, root)
    present = set(evidence_files(root))
    limit = _hash_limit(root)
    progress.stage(f"hashing {len(listed)} files ({_bytes_of(root, listed.keys() & present):,} bytes) "
                   f"against {manifest}")
    for rel, digest in sorted(listed.items()):
        path = root / rel
        if rel not in present:
            result.missing.append(shown_path(rel))
            continue
        size = path.stat().st_size
        if limit is not None and size > limit:
            result.scope.append(f"{rel}: {size:,} bytes, more than the set's whole budget of {limit:,}: not hashed")
            continue
        if limit is None and _sparse(path, size):
            result.scope.append(f"{rel}: {size:,} bytes with holes (a sparse file, which no stage writes): not hashed")
            continue
        now = sha256_file(path)
        result.bytes_hashed += path.stat().st_size
        if now != digest:
            result.changed.append(f"{shown_path(rel)} (sha256 {digest[:12]}... in the manifest, {now[:12]}... now)")
    result.extra.extend(shown_path(rel) for rel in sorted(present - set(listed)))
    result.files_checked = len(listed)


def _bytes_of(root: Path, names) -> int:
    """The bytes that hashing these files reads at most (a file too large is named, not read)."""
    return sum(os.lstat(root / rel).st_size for rel in names)


# --- 3. the runs' metrics ------------------------------------------------------------------------

def current_format(root: Path) -> tuple[bool, list[str]]:
    """(whether the set was made by this pipeline version, problems): every field the current
    code derives must then be there; a missing one is a problem, not a note
    (sacscale.evidence.set_made decides it for every check)."""
    try:
        plan = load_json(root, "plan.json")
    except EvidenceStructureError:
        return False, []
    return made_by_this_code(root, plan)


def check_metrics(root: Path, result: Verification, runs_dir: str = "runs", metrics_dir: str = "metrics",
                  strict: bool = False, progress: StageLines = SILENT) -> dict:
    """Recompute each run's metrics from its events and compare every field with
    metrics/{run}.json. Every run directory needs a metrics file and every metrics file a
    run directory. Returns `{run: metrics}` of the runs that recompute, the summary's inputs:
    the stored metrics, or the ones from the events where those are doubted (a run named here
    is named once: left out, it would change every figure of its configuration's summary)."""
    runs = {p.name: p for p in sorted((root / runs_dir).glob("*")) if p.is_dir() and not p.name.startswith(".")}
    stored_files = {p.stem: p for p in sorted((root / metrics_dir).glob("*.json"))}
    for name in sorted(set(stored_files) - set(runs)):
        result.metrics.append(f"{name}: {metrics_dir}/{name}.json has no run directory {runs_dir}/{name}")
    good = {}
    progress.stage(f"recomputing the metrics of {len(runs)} runs from their events")
    for done, (name, run_dir) in enumerate(runs.items(), 1):
        progress.item(f"run {done}/{len(runs)}: {name}")
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
        except MemoryError:  # one run's events too many to hold: the other runs are still checked
            result.metrics.append(f"{name}: cannot recompute: its event files hold more values than this "
                                  "machine's memory holds at once")
            continue
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            # e.g. a run.json of the wrong shape: named, not a traceback
            result.structure.append(f"{runs_dir}/{name}: cannot recompute its metrics: unexpected structure "
                                    f"({type(exc).__name__}: {exc})")
            continue
        problems, notes = deep_differences(stored, recomputed)
        problems, notes = [f"{name}: {p}" for p in problems], [f"metrics/{name}.json: {n}" for n in notes]
        # the events' rates held to the trainer's own whatever the stored file says: a doubt on
        # any stored field must not switch the events' own checks off
        held, unheld = logged_rate_problems(f"{runs_dir}/{name}", run_dir, recomputed)
        problems, notes = problems + held, notes + unheld
        result.metrics.extend(problems)
        split_notes(result, notes, strict, result.metrics)
        good[name] = stored if not problems and not (strict and notes) else recomputed
    return good


def check_required_fields(root: Path, strict: bool, result: Verification) -> None:
    """In a set made by this code, every field the derivations read is there (a derivation
    skips a field it does not find); an older set's gaps stay notes of those derivations."""
    evidence_format = scope.format_of(root)
    if not strict or evidence_format < scope.FORMAT or not (root / "runs").is_dir():
        return
    runs = sorted(p.name for p in (root / "runs").glob("*") if p.is_dir() and not p.name.startswith("."))
    result.records += absent_field_problems(root, runs, evidence_format)


def check_bindings(root: Path, plan: dict | None, result: Verification, progress: StageLines = SILENT) -> None:
    """Each run's events and evaluation belong to that run (sacscale.evidence.binding)."""
    runs = sorted(p.name for p in (root / "runs").glob("*") if p.is_dir() and not p.name.startswith(".")) \
        if (root / "runs").is_dir() else []
    # the binding fields are required from the sets made under the evidence format that
    # requires them (evidence.json); older sets get a note for each one they lack
    out = binding.Findings(scope.format_of(root) >= scope.FORMAT)
    progress.stage(f"checking that the event files of {len(runs)} runs are their own")
    binding.check_events(root, runs, out, plan.get("execution_order") if isinstance(plan, dict) else None, progress,
                         set_start=binding.set_recorded_at(root))
    model_sha = None
    if (root / "model.json").is_file():
        model = load_json(root, "model.json")
        model_sha = model.get("sha256") if isinstance(model.get("sha256"), str) else None
    iterations = plan.get("iterations") if isinstance(plan, dict) and isinstance(plan.get("iterations"), int) else None
    binding.check_evaluations(root, runs, model_sha, iterations, scope.left_out_hashes(root), out,
                               by_name=plan is not None, plan=plan, progress=progress)
    result.records.extend(out.problems)
    result.notes.extend(out.notes)
    if out.notes:  # said where the verdict is read, not only among the notes
        result.covered.append(f"bound only as far as the records go: {len(out.notes)} binding field(s) of runs and "
                              f"evaluations that this older set's records lack (--notes lists them)")


def check_coverage(root: Path, manifest: Path, result: Verification) -> None:
    """What the manifest covers and what it leaves out by design; the size budget."""
    result.covered.extend(scope.describe(root, result.files_checked, result.bytes_hashed, manifest))
    problems, lines = scope.check_scope(root)
    result.scope.extend(problems)
    result.covered.extend(lines)
    current = scope.format_of(root) >= scope.FORMAT
    problems, notes = readme_findings(root, current)
    result.scope.extend(problems + (set_files_findings(root) if current else []))
    result.notes.extend(notes + ([] if current else _device_folder_notes(root)))


# what an older set's pipeline/ holds: the device's own run of the pipeline, copied beside
# the evidence (a current-format set holds only what its stages write)
DEVICE_FOLDER = "pipeline"


def _device_folder_notes(root: Path) -> list[str]:
    """An older set's pipeline/ folder is hashed with the rest but nothing reads it: said,
    so that its logs, benchmarks, device manifest and device verification are not taken for
    checked ones."""
    folder = root / DEVICE_FOLDER
    if folder.is_symlink() or not folder.is_dir():
        return []
    count = sum(1 for p in folder.rglob("*") if p.is_file())
    return [f"results/{root.name}/{DEVICE_FOLDER}/: the device's own logs, benchmarks and records ({count} files: "
            "its MANIFEST.device.sha256 and verify.device.json among them), hashed but not checked by verify: what "
            "they say is not the evidence's"]


def check_figures(root: Path, summary: dict, metrics: list[dict], names: list[str], result: Verification) -> None:
    """--redraw-figures: the report's figures drawn again from the recomputed evidence."""
    reports = reports_dir(root)
    if reports is None or not (reports / "figures").is_dir():
        result.derived.append(f"reports/{root.name}/figures: missing, so no figure can be drawn again and compared")
        return
    from sacscale.evidence.redraw import check_redrawn_figures  # matplotlib: loaded only when asked

    run_dirs = [root / "runs" / name for name in names if (root / "runs" / name).is_dir()]
    check_redrawn_figures(reports, f"reports/{root.name}", summary, metrics, run_dirs, result)


# the folders a set keeps its runs and records in: one of them a file was named only through
# what it broke (`unexpected structure ... pairs: no runs ...`)
SET_FOLDERS = ("runs", "metrics", "eval", "model")


def check_folders(root: Path, result: Verification) -> None:
    result.structure += [f"{name}: a file where the set keeps a folder" for name in SET_FOLDERS
                         if (root / name).exists() and not (root / name).is_dir()]


# code that reads no record: an error raised there is not the set's JSON (MuJoCo's loader)
_READS_NO_JSON = (f"{os.sep}sacscale{os.sep}task{os.sep}",)


def _unexpected(exc: Exception) -> str:
    """An error the checks did not expect: a JSON field of an unexpected shape deep inside a
    record, where verify's own record-reading code raised it; else named where it was raised
    (MuJoCo's bindings, a drawing library), not blamed on the JSON. Either way it ends the
    cross-checks, which the line says."""
    frames = traceback.extract_tb(exc.__traceback__)
    last = frames[-1] if frames else None
    text = " ".join(str(exc).split())[:300]
    in_sacscale = last is not None and f"{os.sep}sacscale{os.sep}" in last.filename
    if last is None or (in_sacscale and not any(part in last.filename for part in _READS_NO_JSON)):
        return (f"unexpected structure in the set's JSON ({type(exc).__name__}: {text}); "
                "the checks after it were not done")
    return (f"verify stopped: an unexpected error in {Path(last.filename).stem}.{last.name} "
            f"({type(exc).__name__}: {text}); the checks after it were not done")


def _out_of_memory(exc: MemoryError) -> str:
    """Where a cross-check ran out of memory (a set of more values than the machine holds)."""
    ours = [f for f in traceback.extract_tb(exc.__traceback__) if f"{os.sep}sacscale{os.sep}" in f.filename]
    where = f" in {Path(ours[-1].filename).stem}.{ours[-1].name}" if ours else ""
    return (f"verify ran out of memory{where}: the set holds more values than this machine's memory holds at "
            "once, or the machine has too little memory left for verify itself; the checks after it were not done")


def verify(root: str | Path, manifest: str | Path | None = None, recompute: bool = True,
           report_pending: bool = False, redraw_figures: bool = False,
           progress: StageLines = SILENT) -> Verification:
    """`progress` says on stderr which stage runs (sacscale.usage.StageLines); the verdict is
    the returned Verification alone."""
    given, root = root, canonical_root(root)
    refuse_not_a_set(given, root, Path(manifest) if manifest else None)
    manifest = Path(manifest) if manifest else root / MANIFEST_NAME
    result = Verification(root=str(root))
    check_tree(root, result)
    if result.refused:
        return result  # nothing is opened in a tree that holds links or special files
    # the report's folder only where its page is checked: the pipeline's own verification runs
    # while its report (the video among it) is still being written
    reports = None if report_pending else reports_dir(root)
    result.notes += owner_notes(root, reports)
    before = identities(root, reports, manifest)
    try:
        _check_contents(root, manifest, result, recompute, report_pending, redraw_figures, progress)
    except MemoryError as exc:  # what the checks before it found is kept
        module = while_loading(exc)
        if module is not None:
            raise out_of_memory_loading(module) from None
        result.structure.append(_out_of_memory(exc))
    # every check has read what it reads: a file swapped or written meanwhile voids them all
    result.changed_while_read += changed_between(before, identities(root, reports, manifest))
    return result


def _check_contents(root: Path, manifest: Path, result: Verification, recompute: bool, report_pending: bool,
                    redraw_figures: bool, progress: StageLines) -> None:
    """Steps 2 to 6 (the module's docstring), into `result`."""
    check_files(root, manifest, result, progress)
    result.derived += manifest_json_problems(root, manifest)
    check_coverage(root, manifest, result)
    check_folders(root, result)
    if not recompute:
        result.report_check = ("report: not checked (--no-metrics: the files hashed against the manifest only; "
                               "nothing recomputed, the report's numbers and words not read)")
        return
    strict, mixed = current_format(root) if (root / "plan.json").is_file() else (False, [])
    result.records += mixed
    good = check_metrics(root, result, strict=strict, progress=progress) if (root / "runs").is_dir() else {}
    if not (root / "plan.json").is_file():
        check_bindings(root, None, result, progress)
        result.report_check = "report: none (a set not made by the pipeline: no plan.json, no report)"
        return  # not made by the pipeline: no plan to cross-check against
    try:
        progress.stage("cross-checking the runs' records against plan.json")
        plan = load_json(root, "plan.json")
        check_required_fields(root, strict, result)
        check_records(root, plan, result, strict, progress)
        result.records += check_probe_record(root)
        current = scope.format_of(root) >= scope.FORMAT
        for problems, notes in (unwritten_key_findings(root, current), learner_override_findings(root, current)):
            result.records += problems
            result.notes += notes
        check_bindings(root, plan, result, progress)
        names = [r["name"] for r in plan["runs"] if r["name"] in good]
        progress.stage("recomputing summary.json and summary.csv from the metrics")
        recomputed = check_summary(root, plan, [good[n] for n in names], result, strict)
        if recomputed is None:
            result.report_check = "report: none (no summary.json: the set is not finished)"
        else:
            result.checked.append("summary.json")
            if check_report_present(root, result, report_pending):
                metrics = [good[n] for n in names]
                progress.stage(f"checking the report's numbers in {reports_dir(root)}")
                check_report(root, recomputed, metrics, result, current=strict, plan=plan)
                if redraw_figures:
                    progress.stage("drawing the report's figures again to compare them")
                    check_figures(root, recomputed, metrics, names, result)
    except EvidenceStructureError as exc:
        result.structure.append(str(exc))
    except (KeyError, TypeError, AttributeError, IndexError, ValueError) as exc:
        result.structure.append(_unexpected(exc))
    if not report_pending:  # the pipeline's own verification is the one that writes verify.json
        result.derived += verify_json_problems(root, result, scope.report_page_of(root)[0] in PAGE_FORMATS_WRITTEN)
