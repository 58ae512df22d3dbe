"""May the pipeline write into a run set? Complete run sets are read-only.

The workflow asks this at parse time, before it plans any job (`workflow/rules/common.smk`).
A run set `S` is `results/S/` with `reports/S/`. The answer depends on content, never on
file times (a fresh clone gives every file a new time):

- it does not exist (or is empty): the pipeline may create it;
- it holds files tracked by git (committed evidence), or it is complete (every output
  the workflow would make for it exists): read-only. With the same plan and no explicit target the workflow
  plans nothing; `verify` may always run (it writes only under `logs/`); anything else
  fails naming the set and how to choose a new name;
- it exists, is incomplete and its `plan.json` is this plan (ignoring `preset_reason`,
  which names the machine): the pipeline resumes it;
- it exists with a different plan, or without a `plan.json`: refused, nothing is written.
  Where it holds nothing trained (it stopped before its probe, e.g. a GPU preset on a CPU
  machine), the refusal names its folders to remove to make it again under this name;
  nothing is ever removed for the user.
"""

from __future__ import annotations

import json
import os
import subprocess
from sacscale.evidence.eval_protocol import unrecorded_evaluation
from sacscale.git_command import run_git
from sacscale.reading import loads_record, read_limited
from dataclasses import dataclass, field
from pathlib import Path

# plan.json fields that describe the machine the plan was made on, not the plan
IGNORED_PLAN_FIELDS = ("preset_reason",)
READ_ONLY_TARGETS = frozenset({"verify"})
# What the rules write before a set's probe or first run (plan, verify_env, prepare_model,
# reference_env; verify of the set), per top folder: a set holding only these trained nothing,
# and is remade whole from its plan. Anything else (runs/, correctness.json, a probe's or a
# run's log, an attempt set aside, a report) is work a removal would lose.
BEFORE_TRAINING = {
    "results": ("plan.json", "environment.json", "source.diff", "model.json", "model/", "reference_env.json"),
    "logs": ("plan.log", "verify_env.log", "prepare_model.log", "reference_env.log", "verify.log"),
    "benchmarks": ("plan.tsv", "verify_env.tsv", "prepare_model.tsv", "reference_env.tsv", "verify/"),
    "reports": (),
}


class RunSetError(ValueError):
    """The run set may not be written; the message names it and says what to do."""


@dataclass
class RunSetState:
    name: str
    results: Path
    reports: Path
    files: int = 0                     # files under results/S and reports/S
    report_files: int = 0              # of those, under reports/S
    committed: int = 0                 # of those, tracked by git
    complete: bool = False             # every final output of the workflow exists
    plan_found: bool = False
    plan_differences: list[str] = field(default_factory=list)
    untrained_folders: list[Path] = field(default_factory=list)  # the set's folders, if it trained nothing

    @property
    def exists(self) -> bool:
        return self.files > 0

    @property
    def protected(self) -> bool:
        return self.committed > 0 or self.complete

    @property
    def same_plan(self) -> bool:
        return self.plan_found and not self.plan_differences


def comparable(plan: dict) -> dict:
    """A plan as JSON would store it, minus the fields that name the machine."""
    data = json.loads(json.dumps(plan, sort_keys=True, default=str))
    for key in IGNORED_PLAN_FIELDS:
        data.pop(key, None)
    return data


def plan_differences(stored: dict, current: dict) -> list[str]:
    """Top-level plan keys whose values differ (missing on one side included). A plan stored
    before plan.json recorded the evaluation's size has the one its device then gave; one
    stored before it recorded whether evaluation is on is compared on the size alone."""
    if isinstance(stored, dict) and "evaluation" not in stored and unrecorded_evaluation(stored) is not None:
        stored = {**stored, "evaluation": unrecorded_evaluation(stored)}
    if isinstance(stored, dict) and _says_nothing_of_enabled(stored) and isinstance(current.get("evaluation"), dict):
        current = {**current, "evaluation": {k: v for k, v in current["evaluation"].items() if k != "enabled"}}
    a, b = comparable(stored), comparable(current)
    return sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))


def _says_nothing_of_enabled(plan: dict) -> bool:
    evaluation = plan.get("evaluation")
    return isinstance(evaluation, dict) and "enabled" not in evaluation


def _count_files(path: Path) -> int:
    if not path.is_dir():
        return 0
    return sum(1 for p in path.rglob("*") if p.is_file() or p.is_symlink())


def _tracked(repo: Path, paths: list[Path]) -> int:
    """Files under `paths` that git tracks in the repository at `repo` (0 outside git)."""
    try:
        out = run_git(["ls-files", "-z", "--", *[str(p) for p in paths]], str(repo))
    except (OSError, subprocess.SubprocessError):
        return 0
    if out.returncode != 0:
        return 0
    return sum(1 for name in out.stdout.split(b"\0") if name)


def _only_before_training(folder: Path, allowed: tuple[str, ...]) -> bool:
    """Whether every file under `folder` is one the rules write before training (a link, or
    a folder that cannot be read, is not)."""
    try:
        for path in folder.rglob("*"):
            if path.is_dir() and not path.is_symlink():
                continue
            rel = path.relative_to(folder).as_posix()
            if path.is_symlink() or not any(rel == a or (a.endswith("/") and rel.startswith(a)) for a in allowed):
                return False
    except OSError:
        return False
    return True


def untrained_folders(workdir: Path, name: str) -> list[Path]:
    """The set's folders (relative to `workdir`, those that exist) where they hold only what
    the rules write before training; [] where any holds more."""
    folders = [Path(top) / name for top in BEFORE_TRAINING]
    if any((workdir / f).is_symlink() or not _only_before_training(workdir / f, BEFORE_TRAINING[f.parent.name])
           for f in folders if os.path.lexists(workdir / f)):
        return []
    return [f for f in folders if os.path.lexists(workdir / f)]


def inspect(name: str, workdir: str | Path, plan: dict, outputs: list[str]) -> RunSetState:
    """`outputs`: the workflow's final outputs for this set (paths relative to workdir)."""
    workdir = Path(workdir)
    state = RunSetState(name=name, results=Path("results") / name, reports=Path("reports") / name)
    results, reports = workdir / state.results, workdir / state.reports
    state.report_files = _count_files(reports)
    state.files = _count_files(results) + state.report_files
    if not state.files:
        return state
    state.committed = _tracked(workdir, [state.results, state.reports])
    state.complete = bool(outputs) and all((workdir / p).exists() for p in outputs)
    plan_file = results / "plan.json"
    if plan_file.is_file() and not plan_file.is_symlink():
        try:
            stored = loads_record(read_limited(plan_file).decode("utf-8"))
        except (OSError, ValueError):
            stored = None
        if isinstance(stored, dict):
            state.plan_found = True
            state.plan_differences = plan_differences(stored, plan)
    if state.plan_differences and not state.protected:  # a walk of the set only where it is refused
        state.untrained_folders = untrained_folders(workdir, name)
    return state


def _holder(state: RunSetState) -> Path:
    """The set's folder that holds its files: results/S, else reports/S (a report folder
    with no results beside it, e.g. a copy of another set's)."""
    return state.results if state.files > state.report_files else state.reports


def _refusal(state: RunSetState, why: str) -> RunSetError:
    if _holder(state) == state.results:
        advice = (f"to check this one: sacscale verify {state.results}; to rebuild only its report elsewhere: "
                  f"sacscale report --run-set {state.results} --output-dir DIR")
    else:  # no results to verify or report on: the report folder alone is in the way
        advice = (f"to make run set {state.name!r} here, move {state.reports}/ away (or remove it): "
                  "a report folder without its results is no set the pipeline can resume")
    return RunSetError(
        f"run set {state.name!r}: {_holder(state)}/ {why}, so the pipeline will not write into it "
        f"(no folder or file of the set was made or changed). To make a new run set, choose a new name, "
        f"e.g. --config run_set={state.name}_new (any name without files under results/ or reports/); {advice}"
    )


def _untrained_refusal(state: RunSetState, why: str) -> RunSetError:
    """A set that stopped before training (nothing to verify or report on): the way to remake it."""
    folders = " ".join(str(f) for f in state.untrained_folders)
    return RunSetError(
        f"run set {state.name!r}: {state.results}/ {why} but holds nothing trained (no run, probe record or "
        "report; only what the pipeline records before training), so the pipeline will not write into it "
        "(no folder or file of the set was made or changed). To make it under this name with this plan, "
        f"remove its folders yourself (nothing is removed for you): rm -r {folders}; or choose a new name, "
        f"e.g. --config run_set={state.name}_new (any name without files under results/ or reports/)"
    )


def _no_plan(state: RunSetState, kind: str) -> str:
    """Why a set without a plan.json is refused; `kind`: what its files are."""
    if _holder(state) == state.results:
        return f"{kind} and has no plan.json"
    return (f"{kind} but {state.results}/ holds none, not even a plan.json "
            "(this report was not made here by this pipeline)")


def decide(state: RunSetState, targets: set[str] | None, forcing: bool = False, report: bool = False) -> str:
    """'write' (the full workflow), or 'read-only' (only `verify`, nothing to build).
    `targets`: what was asked for (empty: the default target; None: unknown, e.g. an API
    call, treated as asking to build). `forcing`: --forcerun/--forceall/--until given.
    Raises RunSetError when the request would write into a set it may not touch."""
    if not state.exists:
        return "write"
    if targets and set(targets) <= READ_ONLY_TARGETS:
        return "read-only"
    if state.protected:
        kind = (f"holds committed evidence ({state.committed} file(s) tracked by git)" if state.committed
                else "is complete (every output of its plan exists)")
        if not state.plan_found:
            raise _refusal(state, _no_plan(state, kind))
        if state.plan_differences:
            raise _refusal(state, f"{kind} and was made with a different plan (plan.json differs in "
                                  f"{', '.join(state.plan_differences)})")
        if report:
            return "write"  # --report builds no job: it only reads the outputs
        if forcing or targets is None or (targets - {"all"}):
            asked = "rerun stages" if forcing else f"build {', '.join(sorted(targets or [])) or 'its outputs'}"
            raise _refusal(state, f"{kind}; asked to {asked}")
        return "read-only"
    if not state.plan_found and _holder(state) == state.reports:
        raise _refusal(state, _no_plan(state, f"holds {state.report_files} file(s)"))
    if not state.plan_found:
        raise _refusal(state, "exists but has no plan.json (it was not made by this pipeline)")
    if state.plan_differences:
        differs = f"was made with a different plan (plan.json differs in {', '.join(state.plan_differences)})"
        raise _untrained_refusal(state, differs) if state.untrained_folders else _refusal(state, differs)
    return "write"  # an incomplete set of this very plan: resume it


def requested(argv: list[str]) -> dict:
    """What a Snakemake command line asks for, read with Snakemake's own parser (the
    workflow object does not expose it at parse time): `targets` (None when unknown),
    `forcing`, `report`, and `job` (a job that a main Snakemake process, which has
    already decided, runs in a process of its own)."""
    try:
        from snakemake.cli import get_argument_parser  # heavy, and only where Snakemake runs

        args, _ = get_argument_parser().parse_known_args(argv)
    except (ImportError, SystemExit):
        return {"targets": None, "forcing": False, "report": False, "job": False}
    forcing = bool(args.forcerun or args.forceall or args.until or getattr(args, "forcetargets", False))
    return {"targets": set(args.targets or []), "forcing": forcing, "report": bool(args.report),
            "job": bool(getattr(args, "target_jobs", None))}
