"""Outputs that would land in a finished run set's evidence, for every command's output options.

A run set is finished once its manifest is made (results/<set>/MANIFEST.sha256): from then
on its files under results/<set>/ and reports/<set>/ are evidence, and a command's output
there replaced a record verify reads (`aggregate --json results/S/summary.json`) or was one
file too many. Before the manifest the pipeline writes the set's files itself (metrics,
summary, ...), and Snakemake may run a rule again: those writes are not judged here. After
it, the pipeline still writes a few files, each by one command at one name (`_AFTER_MANIFEST`),
and only into the set that command was given (`_own_sets`): `manifest B --output
results/A/MANIFEST.sha256` replaced another set's manifest with B's.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from sacscale.finished_sets import (
    MANIFEST,
    PIPELINE_SET,
    PLAN,
    VERIFICATION,
    described,
    evidence_folder,
    folder_kind,
    made_early,
    own_manifest,
    set_folders,
    spellings,
)


# (command, option, folder, name inside the set's folder): what the pipeline writes once the
# manifest is made (verify.json, the report, the best run's video), or the manifest itself made
# again; '.' is the set's folder itself (`report --run-set S --output-dir reports/S`)
_AFTER_MANIFEST = {
    ("verify", "--output", "results", VERIFICATION),
    ("manifest", "--output", "results", MANIFEST),
    ("manifest", "--json", "results", "manifest.json"),
    ("report", "--output-dir", "reports", "."),
    ("report", "--output-md", "reports", "report.md"),
    ("report", "--output-html", "reports", "report.html"),
    ("report", "--figures-dir", "reports", "figures"),
    ("render-best", "--output", "reports", "figures/best_run.webp"),
    ("render-best", "--record", "reports", "figures/best_run.json"),
}


def _sets_holding(path: str | os.PathLike) -> set[Path]:
    """The results/<set> folder(s) that hold `path`, each resolved (one set, however spelled)."""
    found = set()
    for where in spellings(path, names_folder=True):
        folders = set_folders(where)  # the outermost, as every other check of a set takes it
        if folders:
            found.add(evidence_folder(folders[0]).resolve())
    return found


def _one_set(*paths) -> set[Path]:
    """The one set every given path lies in, or none where they lie in different sets."""
    sets = [_sets_holding(p) for p in paths if p]
    common = set.intersection(*sets) if sets else set()
    return common if len(common) == 1 else set()


def _own_sets(command: str, args: argparse.Namespace) -> set[Path]:
    """The set (results/<set>, resolved) a command was given, as the pipeline's rules give it:
    manifest's and verify's folder, report's --run-set or the set its records come from,
    render-best's set of runs and evaluations."""
    if command in ("manifest", "verify"):
        return {Path(args.root).resolve()}
    if command == "report" and args.run_set:
        return {Path(args.run_set).resolve()}
    if command == "report":
        return _one_set(args.summary, args.verification, args.manifest_json)
    if command == "render-best":
        return _one_set(args.runs_dir, *args.evaluations)
    return set()


def _verification_problem(args: argparse.Namespace, value, results: Path) -> str | None:
    """A set's own verify.json is the pipeline's verification, made before the report (the
    report shows its verdict): written by any other verification (without --report-pending,
    or once the report is there) it records a report check that the set then fails on."""
    again = (f"`sacscale verify {args.root}` alone re-checks it without writing, or write the verification "
             "elsewhere (--output /tmp/verify.json)")
    if not args.report_pending:
        return (f"{value} is {results.name}'s own {VERIFICATION}, which only the pipeline's verification writes "
                f"(with --report-pending, before the set's report); {again}")
    spelled = (Path(os.path.abspath(args.root)), results, results.resolve())
    reports = {f.parent.parent / "reports" / results.name / "report.md" for f in spelled}
    written = next((r for r in sorted(reports) if r.is_file()), None)
    if written is not None:
        return (f"{value} is {results.name}'s own {VERIFICATION}, from which its report {written} was made: "
                f"written again the set no longer verifies; {again}")
    return None


def _own_plan(results: Path) -> bool:
    """Whether `results` is this user's folder holding a plan (plan.json)."""
    try:
        return os.stat(results).st_uid == os.geteuid() and (results / PLAN).is_file()
    except OSError:
        return False


def _planned_set_problem(value, holder: Path, results: Path) -> str | None:
    """A set with a plan and no manifest is being built by the pipeline, whose jobs write
    its files (their environment names the set: PIPELINE_SET). A hand command's output there
    replaced one of the pipeline's (an evaluation under another protocol, which the set then
    failed to verify on, every rerun alike) or was hashed into its manifest as if the
    pipeline's. A set without a plan (a bench made by hand) is the user's; another user's set
    is refused as their folder is (sacscale.atomic.others_can_swap)."""
    if not _own_plan(results) or os.environ.get(PIPELINE_SET) == holder.name:
        return None
    return (f"{value} is inside {holder.parent.name}/{holder.name}, a run set the pipeline plans and has not "
            "finished: the pipeline writes it (run snakemake to finish the set), or write it elsewhere")


def finished_set_problem(command: str, args: argparse.Namespace, option: str, value: str | os.PathLike,
                         names_folder: bool) -> str | None:
    """Why `command`'s output `option` `value` may not be written: it lies in results/<set>/ or
    reports/<set>/ of a set whose manifest is made, at a name the pipeline does not write
    there itself, or into a set the command was not given. None where it may."""
    try:
        written = spellings(value, names_folder)
    except (OSError, RuntimeError):  # a link loop: the command names it
        return None
    for where, holder in ((w, h) for w in written for h in set_folders(w)):
        results = evidence_folder(holder)
        if not own_manifest(results / MANIFEST):
            problem = _planned_set_problem(value, holder, results)
            if problem:
                return problem
            continue  # a set being made by the pipeline's own job, or a set made by hand
        finished = f"{value} is inside {described(holder)}"
        early = made_early(results)
        if early:  # a manifest made by hand mid-build: the pipeline's next write is refused until it goes
            return f"{finished}{early}"
        name = where.relative_to(holder).as_posix()
        if (command, option, folder_kind(holder), name) not in _AFTER_MANIFEST:
            return f"{finished}, whose evidence is not rewritten or added to; write it elsewhere"
        own = _own_sets(command, args)
        if results.resolve() not in own:
            given = ", ".join(str(s) for s in sorted(own)) or "its inputs name no one set"
            return (f"{finished}, not the set this command was given ({given}): another set's {name} is not "
                    "written; write it elsewhere")
        if command == "verify" and name == VERIFICATION:
            problem = _verification_problem(args, value, results)
            if problem:
                return problem
    return None
