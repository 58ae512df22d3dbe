"""Whether a path lies in a finished run set: results/<set>/ or reports/<set>/ of a set
whose manifest is made (results/<set>/MANIFEST.sha256). From then on the set's files are
evidence, and a file added there fails its verification (`extra: ... not in the manifest`).

Low in the layers, so that both the commands' output options (sacscale.commands._finished_sets)
and the lock folder settings (sacscale.locks) are judged by the one rule. A committed set is
a finished one: its manifest is committed with it.
"""

from __future__ import annotations

import functools
import os
import stat
from collections import deque
from pathlib import Path

from sacscale.reading import loads_record, read_limited

# where run sets live: results/<set> (its evidence) and reports/<set> (its report)
SET_FOLDERS = ("results", "reports")
MANIFEST = "MANIFEST.sha256"


def spellings(value: str | os.PathLike, names_folder: bool) -> list[Path]:
    """Where an output goes: as written (absolute, links kept: a set behind a `results` link to
    another disk is still results/<set>) and as the kernel reaches it (a folder it fills
    resolved whole; a file's folder resolved, not its name: an output that is a link is
    replaced, not written through), and by that real path as reached through this checkout's
    results/ or reports/, which comes first: a refusal names the set as results/<set>. A link
    loop raises OSError or RuntimeError."""
    path = Path(value)
    resolved = path.resolve() if names_folder else path.parent.resolve() / path.name
    return list(dict.fromkeys([*_through_checkout(resolved), Path(os.path.abspath(path)), resolved]))


def _through_checkout(resolved: Path) -> list[Path]:
    """`resolved` as reached through a checkout's results/ or reports/ where that, or a folder
    or file at any depth in them, is a link to another disk: written by its real path, the set
    folder's parent is not named results/ and would name no set (results/S/runs kept elsewhere
    included). The checkouts are the working folder, the one holding it and the code's own, so
    a command run from /tmp or src/ judges a path as one run from the checkout does."""
    found = []
    for top in dict.fromkeys(anchor / name for anchor in set_checkouts() for name in SET_FOLDERS):
        for link in _links_in(top):
            try:
                real = link.resolve()
            except (OSError, RuntimeError):  # a link loop: whoever opens it names that
                continue
            if real != link and resolved.is_relative_to(real):
                found.append(link / resolved.relative_to(real))
    return found


def set_checkouts() -> list[Path]:
    """The folders whose results/ and reports/ hold run sets: the working folder, the
    checkout holding it (run from its src/) and the checkout this code belongs to."""
    here = Path(os.path.abspath("."))
    holding = next((f for f in (here, *here.parents) if os.path.isfile(f / "Snakefile")), None)
    return list(dict.fromkeys(f for f in (here, holding, code_checkout()) if f is not None))


def code_checkout() -> Path | None:
    """The checkout this code is imported from (src/sacscale/ in it); None for an installed copy."""
    root = Path(__file__).resolve().parents[2]
    return root if os.path.isfile(root / "Snakefile") else None


# the page the pipeline's report rule writes into reports/<set>, after the set's manifest
REPORT_PAGE = "report.md"
# bounds the folders read beside a report folder's parent for its set's evidence folder
BESIDE_LIMIT = 1_000

# bounds the walk of results/ and reports/ for links (a checkout's committed sets hold under
# 2,000 entries, walked in about 10 ms); a link past it is not mapped back
WALK_LIMIT = 20_000


@functools.lru_cache(maxsize=16)
def _links_in(top: Path) -> tuple[Path, ...]:
    """`top` if it is a link, and the links at any depth inside it (followed no further),
    breadth first, at most WALK_LIMIT entries read. Walked once a process: a command judges
    each of its outputs against the same links."""
    links = [str(top)] if top.is_symlink() else []
    folders, seen = deque([str(top)]), 0
    while folders and seen < WALK_LIMIT:
        try:
            with os.scandir(folders.popleft()) as entries:
                for entry in entries:
                    seen += 1
                    if entry.is_symlink():
                        links.append(entry.path)
                    elif entry.is_dir(follow_symlinks=False):
                        folders.append(entry.path)
        except OSError:  # no such folder, not one, or not ours to read
            continue
    return tuple(map(Path, links))


def set_folders(where: Path) -> list[Path]:
    """Every folder named like a set (its parent results/ or reports/), or a set's folder
    known by its records, that holds `where` (or is it), the outermost first: in
    results/S/reports/x.json the set is results/S, not reports/x.json, and a folder of the
    set's own named results/ or reports/ does not hide it."""
    return [f for f in reversed((where, *where.parents)) if f.parent.name in SET_FOLDERS or _evidence_by_records(f)]


def _evidence_by_records(folder: Path) -> Path | None:
    """The evidence folder of the set whose folder `folder` is, reached by its real path
    whatever its parent's name (results/ and reports/ links to another disk's folders of
    other names), known by the set's records: `folder` itself where it holds them, or, where
    `folder` holds the set's report page, the folder of its name beside its parent's (the
    two links' folders kept side by side) that holds them. None where neither does."""
    if _finished_by_records(folder):
        return folder
    if folder.name and os.path.isfile(folder / REPORT_PAGE):
        return next((f for f in _beside(folder) if _finished_by_records(f)), None)
    return None


def _beside(folder: Path) -> list[Path]:
    """The folders of `folder`'s name in the folders beside its parent (at most
    BESIDE_LIMIT read): where results/<set> is kept when reports/<set> is `folder`."""
    found = []
    try:
        with os.scandir(folder.parent.parent) as entries:
            for _, entry in zip(range(BESIDE_LIMIT), entries):
                if entry.path != str(folder.parent) and entry.is_dir():
                    found.append(Path(entry.path) / folder.name)
    except OSError:  # not ours to read, or gone
        pass
    return found


def _finished_by_records(folder: Path) -> bool:
    """A set's evidence folder reached by its real path, whatever its parent's name (results/
    a link to another disk's folder of another name): this user's manifest beside a plan the
    pipeline wrote. A manifest alone is not enough: `sacscale manifest` hashes any bench a
    user keeps writing in, which is theirs to add to."""
    return own_manifest(folder / MANIFEST) and os.path.isfile(folder / PLAN)


def evidence_folder(holder: Path) -> Path:
    """The evidence folder (results/<set>) of a set folder set_folders found."""
    if holder.parent.name in SET_FOLDERS:
        return holder.parent.parent / "results" / holder.name
    return _evidence_by_records(holder) or holder


def folder_kind(holder: Path) -> str:
    """results or reports: which of a set's folders `holder` is."""
    if holder.parent.name in SET_FOLDERS:
        return holder.parent.name
    return "results" if evidence_folder(holder) == holder else "reports"


def own_manifest(manifest: Path) -> bool:
    """A set is finished by its own user's manifest: a plain file of this user's. Another
    user's file (or a link) at that name does not make this user's folder a finished set;
    their sets are refused as their folders are (the rule on other users' folders)."""
    try:
        st = os.lstat(manifest)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and st.st_uid == os.geteuid()


def finished_set_holding(folder: str | os.PathLike) -> Path | None:
    """The finished set's folder (results/<set> or reports/<set>, as first found) that holds
    `folder` as written or as the kernel reaches it; None where none does (a link loop
    included: whoever opens the folder names that)."""
    try:
        found = spellings(folder, names_folder=True)
    except (OSError, RuntimeError):
        return None
    for where in found:
        for holder in set_folders(where):
            if own_manifest(evidence_folder(holder) / MANIFEST):
                return holder
    return None


def described(holder: Path) -> str:
    """`results/S, a finished run set (it has results/S/MANIFEST.sha256)`, for a refusal."""
    if holder.parent.name not in SET_FOLDERS and folder_kind(holder) == "reports":  # reached by its real path
        return (f"{holder}, the report folder of a finished run set (its evidence folder {evidence_folder(holder)} "
                f"has {MANIFEST} and {PLAN})")
    if holder.parent.name not in SET_FOLDERS:
        return f"{holder}, a finished run set (it has {holder / MANIFEST} and {PLAN})"
    return (f"{holder.parent.name}/{holder.name}, a finished run set (it has results/{holder.name}/{MANIFEST})")


# what the pipeline's manifest rule (workflow/rules/evidence.smk) waits for, besides each
# planned run's run.json, metrics and evaluation
SET_RECORDS = ("plan.json", "environment.json", "source.diff", "model.json", "correctness.json",
               "summary.csv", "summary.json")
PLAN = "plan.json"
ENVIRONMENT = "environment.json"
STORED_DIFF = "source.diff"
# the pipeline's verification of a set, written after its manifest
VERIFICATION = "verify.json"
# names the run set a pipeline builds, set by the workflow (workflow/rules/common.smk) and
# inherited by its jobs' commands: theirs are the writes into that planned, unfinished set
PIPELINE_SET = "SACSCALE_PIPELINE_SET"


class _UnreadablePlan(Exception):
    """plan.json is there but is no JSON: the set is the pipeline's, half written or damaged."""


def _planned_runs(results: Path) -> tuple[list[tuple[str, bool]], bool | None] | None:
    """(run, evaluated) for each run plan.json names, in its order (the reference trainer's
    runs are not evaluated), and whether the plan evaluates (its evaluation's `enabled`;
    None where it does not say: a set planned before plan.json recorded it); None where the
    set has no plan (a set made by hand) or one of another shape (an older set: verify names
    what it lacks). _UnreadablePlan where plan.json cannot be read as JSON."""
    if not os.path.lexists(results / PLAN):
        return None
    try:
        plan = loads_record(read_limited(results / PLAN).decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        raise _UnreadablePlan from None
    try:
        configs = plan["run_configs"]
        runs = [(r["name"], (configs[r["config"]].get("trainer") or "sacscale") != "unilab") for r in plan["runs"]]
    except (KeyError, TypeError, AttributeError):
        return None
    evaluation = plan.get("evaluation")
    enabled = evaluation.get("enabled") if isinstance(evaluation, dict) else None
    return runs, enabled if isinstance(enabled, bool) else None


def missing_outputs(results: str | os.PathLike) -> list[str]:
    """The outputs the pipeline writes into results/<set> before its manifest that are not
    there yet: a set with a plan whose manifest would be made early. The evaluations are
    counted where the plan says evaluation is on; where it does not say (a set planned
    before it recorded that), once the set has any. Empty for a complete set and for a set
    without a plan (benches made by hand)."""
    results = Path(results)
    try:
        planned = _planned_runs(results)
    except _UnreadablePlan:
        return [f"{PLAN} that can be read (it is there, but not as JSON)"]
    if planned is None:
        return []
    runs, evaluates = planned
    if evaluates is None:
        evaluates = (results / "eval").is_dir() and any((results / "eval").glob("*.json"))
    wanted = [name for name in SET_RECORDS if name != PLAN and (name != STORED_DIFF or _diff_stored(results))]
    for run, ours in runs:
        wanted += [f"runs/{run}/run.json", f"metrics/{run}.json"] + ([f"eval/{run}.json"] if ours and evaluates else [])
    return [name for name in wanted if not (results / name).is_file()]


def _diff_stored(results: Path) -> bool:
    """Whether the set owes its stored diff, as verify holds it: where environment.json
    records one that is not empty. An older set's records none (h200x1's: made before the
    diff was stored), and one recorded empty with none stored is a note there; an
    environment.json that is missing or cannot be read says nothing, and the diff is owed."""
    try:
        env = loads_record(read_limited(results / ENVIRONMENT).decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return True
    project = env.get("project") if isinstance(env, dict) else None
    diff = project.get("diff") if isinstance(project, dict) else None
    return isinstance(diff, dict) and diff.get("bytes") != 0


def shown_missing(missing: list[str], first: int = 3) -> str:
    """`runs/a/run.json, metrics/a.json and 4 more`: the first of the missing outputs."""
    more = f" and {len(missing) - first} more" if len(missing) > first else ""
    return ", ".join(missing[:first]) + more


def made_early(results: str | os.PathLike) -> str:
    """Where a finished set's manifest was made before the set was complete: what is
    missing and the way out, for a refusal that names the set as finished; else ''."""
    missing = missing_outputs(results)
    # its verification follows its manifest: an older set that never had a record now wanted
    if not missing or (Path(results) / VERIFICATION).is_file():
        return ""
    return (f"; but that set is not complete (no {shown_missing(missing)}): its {MANIFEST} and manifest.json were "
            "written before the set was complete: remove both, then run the pipeline again")
