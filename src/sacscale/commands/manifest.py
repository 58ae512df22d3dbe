"""`sacscale manifest ROOT`: write ROOT/MANIFEST.sha256 (sha256sum format) and manifest.json.

With --scope (a set of the current evidence format, held to its size budget): first the
policies of runs no claim rests on move out of the set (--keep-policies names the runs
whose policies stay: learning runs, the report's best run), and evidence.json records
each one left out with its hash; then everything in the set is hashed, evidence.json too.
The whole step holds the set's lock (sacscale.commands._set_lock): a second manifest or a
verify writing into the set meanwhile is refused."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from sacscale.atomic import others_can_swap
from sacscale.commands._inputs import BadInput, read_evaluations, refuse_one_file, refuse_output_inside
from sacscale.commands._live_run import live_trainer_problem
from sacscale.commands._output_lock import holding_outputs, refuse_a_live_folder
from sacscale.commands._set_lock import holding_the_set
from sacscale.eval.best import best_run
from sacscale.evidence import scope
from sacscale.evidence.manifest import ManifestError, write
from sacscale.finished_sets import missing_outputs, shown_missing
from sacscale.usage import say


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("root", help="evidence root (results/<run set>); paths in the manifest are relative to it")
    parser.add_argument("--output", help="manifest file (default: ROOT/MANIFEST.sha256)")
    parser.add_argument("--json", help="counts and sizes (default: ROOT/manifest.json)")
    parser.add_argument("--scope", action="store_true",
                        help="write evidence.json (the current evidence format and its size budget) before hashing")
    parser.add_argument("--keep-policies", nargs="*", default=None, metavar="RUN",
                        help="with --scope: the runs whose policies a claim rests on; every other run's "
                             "checkpoints/final.pt moves to --left-out-dir (default: keep every policy)")
    parser.add_argument("--keep-best", nargs="+", default=None, metavar="EVAL_JSON",
                        help="with --scope: keep the policy of the best-evaluated run of these evaluations (named "
                             "<run>.json; the run render-best shows) as well; every other policy moves as with "
                             "--keep-policies")
    parser.add_argument("--left-out-dir",
                        help="with --keep-policies or --keep-best: where the other policies go (outside the set)")


def run(args: argparse.Namespace) -> int:
    refuse_output_inside("--output", args.output, args.root, allowed=("MANIFEST.sha256",))
    refuse_output_inside("--json", args.json, args.root, allowed=("manifest.json",))
    _refuse_a_system_root(args.root)
    _refuse_a_set_others_can_swap_in(args)
    manifest = args.output or Path(args.root) / "MANIFEST.sha256"
    record = args.json or Path(args.root) / "manifest.json"
    refuse_one_file(("--output", manifest), ("--json", record))  # the record replaced the manifest, exit 0
    if not args.scope and (args.keep_policies is not None or args.keep_best or args.left_out_dir):
        # options that do not go together: a usage error (exit 2), not a manifest that failed
        raise BadInput("--keep-policies, --keep-best and --left-out-dir need --scope")
    keeping = [option for option, given in (("--keep-policies", args.keep_policies is not None),
                                            ("--keep-best", args.keep_best)) if given]
    if keeping and not args.left_out_dir:  # named as given, before any evaluation is read
        raise BadInput(f"{' and '.join(keeping)} need{'s' if len(keeping) == 1 else ''} --left-out-dir "
                       "(where the other policies go)")
    _refuse_live_runs(Path(args.root))
    if args.left_out_dir:  # the policies moved there would join another command's live folder
        refuse_a_live_folder("--left-out-dir", args.left_out_dir, Path(os.path.realpath(args.left_out_dir)))
    try:
        with holding_outputs(*_named_outside(args)), \
                holding_the_set(args.root, "nothing was moved or written"):  # the whole step, or none of it
            _refuse_an_unfinished_set(args)
            if args.scope:
                _write_scope(args)
            info = write(args.root, args.output, args.json)
    except ManifestError as exc:
        say(f"sacscale manifest: error: {exc}", file=sys.stderr)
        return 1
    print(f"{info['files']} files, {info['bytes']:,} bytes listed")
    return 0


def _refuse_live_runs(root: Path) -> None:
    """A run of the set a trainer is training in now: its files would change under the
    hashes (and a policy left out would be an earlier sitting's)."""
    runs = root / "runs"
    for run in sorted(runs.iterdir()) if runs.is_dir() else []:
        if run.is_dir() and (live := live_trainer_problem(str(run), "the hashes of its files", "list")):
            raise BadInput(f"{run}: {live}")


def _refuse_an_unfinished_set(args: argparse.Namespace) -> None:
    """A set the pipeline plans (its plan.json) whose planned outputs are not all there yet:
    a manifest written into it marked it finished mid-build, and the pipeline's next write
    there was refused, on every rerun. Sets without a plan (benches made by hand) are hashed
    as they are, and so is any set where nothing is written into it (--output and --json
    elsewhere, no --scope)."""
    root = Path(os.path.realpath(args.root))
    into_the_set = args.scope or len(_named_outside(args)) < 2
    missing = missing_outputs(root) if into_the_set and root.is_dir() else []
    if missing:
        raise BadInput(f"{args.root}: a run set the pipeline has not finished: no {shown_missing(missing)}, which "
                       "its plan.json promises before the manifest; the pipeline writes the manifest once the set is "
                       "complete (run it again to finish the set); nothing was written")


def _named_outside(args: argparse.Namespace) -> list[tuple[str, str]]:
    """--output and --json where given outside the set: two manifests of different sets given
    the same pair, each under its own set's lock, left one's manifest beside the other's
    record. Those inside the set (its own MANIFEST.sha256, manifest.json) are under the set's
    lock, and a lock file beside them would be listed in the manifest."""
    root = Path(os.path.realpath(args.root))
    return [(option, path) for option, path in (("--output", args.output), ("--json", args.json))
            if path and not Path(os.path.realpath(Path(path).parent)).is_relative_to(root)]


# the file system's root and the kernel's folders: no evidence, and their entries come and go
_SYSTEM_ROOTS = (Path("/"), Path("/dev"), Path("/proc"), Path("/sys"))


def _refuse_a_system_root(root: str) -> None:
    """ROOT the file system's root or inside a kernel folder was walked whole until an entry
    vanished (`/proc/23375: no such file or directory`), naming neither."""
    where = Path(root).resolve()
    if where == Path("/") or any(where.is_relative_to(system) for system in _SYSTEM_ROOTS[1:]):
        raise BadInput(f"{root}: the file system's root or a kernel folder, not a run set's folder; give the set's "
                       "folder (results/<run set>)")


def _refuse_a_set_others_can_swap_in(args: argparse.Namespace) -> None:
    """The default outputs go into the set: held to the rule a named output is (sacscale.cli),
    as another user could replace them there between their writing and their reading."""
    defaults = [name for name, given in (("MANIFEST.sha256", args.output), ("manifest.json", args.json))
                if not given]
    problem = others_can_swap(args.root) if defaults and Path(args.root).is_dir() else None
    if problem:
        raise BadInput(f"{args.root}: {problem}, who could replace the {' and '.join(defaults)} written there; "
                       "give --output and --json in a folder of your own")


def _write_scope(args: argparse.Namespace) -> None:
    root = Path(args.root)
    left_out = []
    if args.keep_policies is not None or args.keep_best:  # with --left-out-dir (run)
        dest = Path(args.left_out_dir).resolve()
        if dest == root.resolve() or root.resolve() in dest.parents:
            raise BadInput(f"--left-out-dir {args.left_out_dir}: inside the set; it must be outside")
        runs = {p.name for p in (root / "runs").iterdir() if p.is_dir()} if (root / "runs").is_dir() else set()
        # a misspelt run would have every policy moved out, the one meant to stay too
        unknown = sorted(set(args.keep_policies or []) - runs)
        if unknown:
            raise BadInput(f"--keep-policies {' '.join(unknown)}: no run of that name under {root}/runs")
        keep = set(args.keep_policies or [])
        if args.keep_best:
            best = _best_run(args.keep_best)
            if best not in runs:
                raise BadInput(f"--keep-best: the best-evaluated run {best} is no run under {root}/runs "
                               "(evaluations of another set?)")
            keep.add(best)
        _refuse_moving_the_best(root, keep, best if args.keep_best else None)
        try:
            left_out = scope.leave_out_policies(root, keep, dest)
        except scope.LeftOutTaken as exc:  # the user's choice of folder: a usage error, nothing moved
            raise BadInput(f"--left-out-dir {args.left_out_dir}: {exc}") from None
    try:
        kept = scope.write_scope(root, left_out)
    except scope.ScopeError as exc:
        raise ManifestError(str(exc)) from None
    for entry in kept["left_out"]:
        say(f"left out by design: {entry['path']} (sha256 {entry['sha256'][:12]}...): {entry['why']}")


def _refuse_moving_the_best(root: Path, keep: set[str], chosen: str | None) -> None:
    """BadInput, before any policy moves, where the set's best run (verify's judgement) would
    lose its policy: evaluations given to --keep-best other than the set's own chose another
    run, and verify named the moved policy only afterwards."""
    moved = scope.best_policy_to_move(root, keep)
    if moved is None:
        return
    run, why = moved
    policy = (Path("runs") / run / scope.POLICY).as_posix()
    if chosen is not None:
        raise BadInput(f"--keep-best: {policy} would move out of the set, but {run} is {why}, while the "
                       f"evaluations given chose {chosen}: give the set's own evaluations (eval/*.json); "
                       "nothing was moved")
    raise BadInput(f"--keep-policies: {policy} would move out of the set, but {run} is {why}, whose policy "
                   "the set keeps: name it too (or give --keep-best); nothing was moved")


def _best_run(paths: list[str]) -> str:
    """The run whose policy the report's video shows (sacscale.eval.best), by its evaluations."""
    try:
        return best_run(read_evaluations(paths))["run"]
    except BadInput as exc:  # an evaluation that cannot be read: one line, exit 2 (sacscale.cli)
        raise BadInput(f"--keep-best: {exc}") from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ManifestError(f"--keep-best: {type(exc).__name__}: {exc}") from None
