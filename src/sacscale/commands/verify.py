"""`sacscale verify ROOT`: refuse links and special files, re-hash against the manifest,
recompute every run's metrics, cross-check the records against the plan, recompute the
summary and the numbers the report's tables show (see sacscale.evidence.verify).

Exits 1 naming each problem; 0 when everything matches; 2 for bad input, a path that names
no set among it (no such folder, a report folder, a folder of sets). Fields an older set never
recorded are listed as notes and do not fail it. Every spelling of a set (a relative
path, `..`, a link to it) is checked as its canonical path, which the output names. The
output also says what is hashed and what is left out of the manifest by design. Writing its
result into the set (--output ROOT/verify.json), it holds the set's lock, as manifest does
(sacscale.commands._set_lock). A set whose report or manifest another command is writing (its
lock held, before or after the check) is refused with exit 2, naming the holder, rather than
judged from pages read half old, half new. Which stage runs is said on stderr
(sacscale.commands._progress), where stderr is a terminal or with --progress; stdout is the
verdict alone."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from sacscale.atomic import write_json
from sacscale.commands import BadInput
from sacscale.commands._inputs import refuse_names_not_text, refuse_output_inside, same_file
from sacscale.commands._output_lock import holding_outputs
from sacscale.commands._progress import add_progress_options, stage_lines
from sacscale.commands._set_lock import holding_the_set
from sacscale.evidence.manifest import ManifestError, parse_manifest
from sacscale.evidence.result import OutOfMemoryLoading, Verification, out_of_memory_loading, while_loading
from sacscale.evidence.set_root import NotARunSet, canonical_root, refuse_not_a_set, reports_dir
from sacscale.locks import UntrustedLock, holder_beside, lock_file_beside
from sacscale.scratch import UnsafeTemporaryFolder
from sacscale.usage import printable, say


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("root", help="evidence root (results/<run set>)")
    parser.add_argument("--manifest", help="manifest to check against (default: ROOT/MANIFEST.sha256)")
    parser.add_argument("--output", help="write the result as JSON here (also when it fails)")
    parser.add_argument("--no-metrics", action="store_true", help="only re-hash; recompute nothing")
    parser.add_argument("--notes", action="store_true", help="print every note (fields an older set never recorded)")
    parser.add_argument("--redraw-figures", action="store_true",
                        help="also draw the report's figures again from the recomputed evidence and compare them "
                             "pixel for pixel with reports/<set>/figures (a few seconds); a figure drawn by other "
                             "code or another matplotlib cannot be confirmed and is named as a problem")
    parser.add_argument("--report-pending", action="store_true",
                        help="the report is written after this verification (the pipeline's own check, whose "
                             "verdict the report embeds): a set's missing report is a note, not a problem")
    add_progress_options(parser)


def _refuse_partial_record(output: str | None, root: str, option: str) -> None:
    if output and same_file(output, Path(root) / "verify.json"):
        raise BadInput(f"--output {output}: the set's verify.json records the full check of its own manifest, "
                       f"whose verdict and counts the report shows; a check with {option} is another kind: "
                       "write it elsewhere")


def _refuse_no_manifest(given: str, root: str) -> None:
    """A --manifest other than the set's own that is no manifest, or names a path no file of
    the set can have, is the user's bad option (exit 2); the set's own that is none is damaged
    evidence (exit 1, where verify reads it)."""
    cure = "name a set's MANIFEST.sha256 (sacscale manifest writes one)"
    if not os.path.lexists(given):
        raise BadInput(f"--manifest {given}: no such file; {cure}")
    try:
        parse_manifest(given, os.path.realpath(root))  # the set's folder as verify opens its files
    except ManifestError as exc:
        raise BadInput(f"--manifest {exc}; {cure}") from None


def _refuse_option_clashes(args: argparse.Namespace) -> None:
    """The options that cannot go together, and a --manifest of the user's that is none."""
    if args.redraw_figures and args.no_metrics:  # the figures are drawn from the recomputed metrics
        raise BadInput("--redraw-figures draws the figures from the metrics it recomputes, which --no-metrics "
                       "leaves out: give one of them")
    own_manifest = not args.manifest or same_file(args.manifest, Path(args.root) / "MANIFEST.sha256")
    if args.no_metrics or not own_manifest:  # the set's verify.json is the full check of its own manifest
        _refuse_partial_record(args.output, args.root, "--no-metrics" if args.no_metrics else "--manifest")
    if not own_manifest:
        _refuse_no_manifest(args.manifest, args.root)


def _refuse_while_written(root: str, report_pending: bool) -> None:
    """Refused (exit 2) while another of this user's sacscale commands holds the lock of the
    set (manifest) or of its report's folder (report; unless the report is pending, and its
    folder not read): what verify would read there is being replaced. A lock file another
    user could have written names no holder of ours: it is passed over, and the set judged
    as it lies."""
    real = Path(os.path.realpath(root))
    report = None if report_pending else reports_dir(real)
    for folder, writer in ((real, "another sacscale manifest or verify is writing into this run set"),
                           (report, "a report of this set is being written into it")):
        if folder is None:
            continue
        try:
            holder = holder_beside(folder, others_only=True)
        except UntrustedLock:
            continue
        if holder:
            raise BadInput(f"{printable(str(folder))}: {writer} ({holder} holds "
                           f"{printable(str(lock_file_beside(folder)))}); verify the set again once that ends")


def run(args: argparse.Namespace) -> int:
    if not args.root.strip():  # `verify "$SET"` with SET unset would otherwise check the working directory
        raise BadInput("ROOT is empty (an unset variable?): name the set's folder, results/<set>")
    # a set under a name that is not UTF-8 cannot be verified in place: MuJoCo cannot open its
    # model and the event reader its runs' events there (nor the records name it), so it is
    # refused whole, with the cure, rather than checked in part
    refuse_names_not_text(("root", args.root))
    _refuse_option_clashes(args)
    refuse_output_inside("--output", args.output, args.root, allowed=("verify.json",))
    reports = reports_dir(Path(os.path.realpath(args.root)))
    if reports is not None:
        refuse_output_inside("--output", args.output, reports)
    # a verdict recorded in the set is of the set at rest: no manifest rewrites it meanwhile
    into_the_set = args.output and same_file(Path(args.output).parent, args.root)
    # another command's verdict written to the same file meanwhile would be replaced unseen
    holding = holding_the_set(args.root, "nothing was written") if into_the_set else holding_outputs(
        ("--output", args.output))
    with holding:
        _refuse_while_written(args.root, args.report_pending)
        result = _verified(args)
        if result is not None and not result.ok:  # a writer that started meanwhile explains what changed
            _refuse_while_written(args.root, args.report_pending)
        if result is None:
            return 1
        if args.output:
            write_json(args.output, result.as_dict())
    if args.notes:
        for line in result.notes:
            say(f"note: {line}")
    # each line below may quote the set's own text (a left-out file's reason, a record's value): one line each
    for line in result.covered:
        say(line)
    if result.report_check:  # how the report's numbers were checked: its numbers file, or its tables only
        say(result.report_check)
    extra = f", recomputed {' and '.join(result.checked)}" if result.checked else ""
    # the notes are of several kinds (fields an older set lacks, what was not compared and why)
    notes = f"; {len(result.notes)} note(s) (--notes lists them)" if result.notes else ""
    if result.ok:
        print(f"verified {result.files_checked} files and {result.runs_checked} runs' metrics under "
              f"{_named(args.root, result.root)}"
              f"{extra}{notes}")
        return 0
    problems = result.problems()
    say(f"sacscale verify: {len(problems)} problem(s) under {_named(args.root, result.root)}:", file=sys.stderr)
    for line in problems:
        say(f"  {line}", file=sys.stderr)
    return 1


def _verified(args: argparse.Namespace) -> Verification | None:
    """The verification of the set; None where its manifest cannot be read (named here)."""
    try:
        # a path that names no set is refused before the checks' libraries (pandas, scipy,
        # matplotlib) load; verify judges the set again itself
        refuse_not_a_set(args.root, canonical_root(args.root), Path(args.manifest) if args.manifest else None)
        progress = stage_lines("verify", args)
        progress.stage("loading the checks' code (pandas, scipy)")
        verify = _verify_loaded()
        return verify(args.root, args.manifest, recompute=not args.no_metrics, report_pending=args.report_pending,
                      redraw_figures=args.redraw_figures, progress=progress)
    except NotARunSet as exc:  # a path that names no set is the user's wrong input, not damaged evidence
        raise BadInput(str(exc)) from None
    except (ManifestError, OutOfMemoryLoading) as exc:  # no verdict: nothing of the set was judged wrong
        say(f"sacscale verify: error: {exc}", file=sys.stderr)
        return None
    except ImportError as exc:  # a library that cannot load here (a memory limit: `failed to map segment`)
        why = printable(" ".join(str(exc).split()))[:200]
        say(f"sacscale verify: error: verify could not load its own code ({why}) before it had judged the set; "
            "nothing was recorded", file=sys.stderr)
        return None
    except UnsafeTemporaryFolder:  # this machine's setting refused, as bad input: no verdict to record
        raise
    except Exception as exc:  # a fault of verify itself: the CLI names it; the output still says it failed
        if args.output:
            write_json(args.output, _stopped(args.root, exc).as_dict())
        raise


def _verify_loaded():
    """evidence.verify's verify; out of memory while its modules load (pandas, scipy), no set
    was judged: said as for a module loaded later, nothing recorded."""
    try:
        from sacscale.evidence.verify import verify
    except MemoryError as exc:
        raise out_of_memory_loading(while_loading(exc) or "sacscale.evidence.verify") from None
    return verify


def _stopped(root: str, exc: Exception) -> Verification:
    """The result of a verification an unexpected error stopped: failed, the error its one
    problem (what the checks before it found is not kept)."""
    text = " ".join(str(exc).split())[:300]
    return Verification(root=os.path.realpath(root), structure=[
        f"verify stopped: {type(exc).__name__}: {text} (unexpected; SACSCALE_TRACEBACK=1 shows where)"])


def _named(given: str, canonical: str) -> str:
    """The set as the user named it, and its canonical path when that differs; a newline or
    escape sequence in a folder's name is shown escaped (it could forge verify's lines)."""
    return printable(given if given == canonical else f"{given} (that is, {canonical})")
