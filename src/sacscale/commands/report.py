"""`sacscale report`: the run set's Markdown and HTML report, with figures.

Two ways to call it: with every input named (as the workflow's report rule does), or
`--run-set results/S`, which reads a finished set's files where the pipeline put them
and rebuilds only its report (report.md, report.html, figures/): nothing under
results/S/ is written. A set whose report is committed keeps it; the report is then
built into `--output-dir`.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from sacscale.atomic import file_kind, others_can_swap, refuse_foreign_links
from sacscale.commands._live_run import live_trainer_problem
from sacscale.commands._progress import add_progress_options, stage_lines
from sacscale.commands._report_output import Refused, refuse_mount_points, staged_report
from sacscale.commands._inputs import (
    refuse_one_file,
    refuse_output_in_run_sets,
    refuse_output_inside,
    refuse_output_on_input,
)
from sacscale.evidence import scope
from sacscale.evidence.manifest import ManifestError
from sacscale.evidence.set_root import canonical_root, reports_dir
from sacscale.evidence.runset import _tracked as tracked_files
from sacscale.reading import open_regular, read_limited
from sacscale.report.record_error import RecordError
from sacscale.report.figure_names import FIGURES
from sacscale.report.names import NUMBERS_NAME
from sacscale.report.set_inputs import set_inputs
from sacscale.usage import say

# what `--run-set` needs from results/S/: the set has been through its verification
FINISHED = ("plan.json", "summary.json", "environment.json", "verify.json", "manifest.json")
NAMED = ("summary", "metrics", "output_md", "output_html", "figures_dir")
# every other input: with --run-set each is read from the set, so one given too was ignored
OPTIONAL = ("environment", "model", "correctness", "verification", "manifest_json", "run_dirs", "attempts_dir",
            "evaluations", "video", "video_record", "deviations")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--run-set", metavar="RESULTS_DIR",
                        help="rebuild only the report of this finished set (results/<set>), from its own files; "
                        "its evidence is not written. The other inputs are then found where the pipeline put them")
    parser.add_argument("--output-dir", metavar="DIR",
                        help="with --run-set: where the report goes (default reports/<set>; required where that "
                        "report is committed)")
    parser.add_argument("--summary", help="summary.json (from aggregate)")
    parser.add_argument("--metrics", nargs="+", help="per-run metrics JSON files, in run order")
    parser.add_argument("--output-md", help="the report as Markdown, to write")
    parser.add_argument("--output-html", help="the report as HTML (figures linked), to write")
    parser.add_argument("--figures-dir", help="where the PNG figures go (inside the report's directory)")
    parser.add_argument("--environment", help="environment.json (from verify-env)")
    parser.add_argument("--model", help="model.json (from prepare-model)")
    parser.add_argument("--correctness", help="correctness.json (from probe correctness)")
    parser.add_argument("--verification", help="verify.json (from verify)")
    parser.add_argument("--manifest-json", help="manifest.json (from manifest)")
    parser.add_argument("--run-dirs", nargs="+", metavar="RUN_DIR",
                        help="the runs' directories (tb/rank*/ event files), for the learning curves")
    parser.add_argument("--attempts-dir", help="where the run wrapper keeps failed or stopped attempts "
                        "(logs/<run set>/attempts); the report lists them")
    parser.add_argument("--evaluations", nargs="*", default=[], metavar="EVAL_JSON",
                        help="sacscale evaluate outputs named <run>.json, for the learning-quality table")
    parser.add_argument("--video", help="the best run's video (sacscale render-best); one outside the report's "
                        "directory is copied into its figures directory, as best_run.webp")
    parser.add_argument("--video-record", help="its record of the choice (sacscale render-best --record)")
    parser.add_argument("--deviations", help="the Markdown file of deviations from the reference system; the report "
                        "links it (relative to the report's directory)")
    add_progress_options(parser)


def _attempts(path: str | None) -> list[str]:
    p = Path(path) if path else None
    return sorted(e.name for e in p.iterdir()) if p is not None and p.is_dir() else []


def refuse_links(*folders: Path) -> None:
    """The report's folder and its figures folder are its own: through a link, its files
    would replace the ones where the link points (another set's committed report, a folder
    of someone else's). A link higher up the path (reports/ on another disk) is the user's
    layout and is followed."""
    for folder in folders:
        if folder.is_symlink():
            raise Refused(f"{folder}: a symbolic link; the report is written into a folder of its own, never "
                          "through a link (it would replace the files where the link points): remove the link")


def refuse_shared(*folders: Path) -> None:
    """The report's folder and its figures folder are written by this user alone: where
    another user can write (their folder, or one open to all without the sticky bit) they
    could swap a page or a figure for their own between the report's writing and its
    reading. A folder not made yet is judged by the one it would be made in."""
    for folder in folders:
        existing = next(f for f in (folder, *folder.absolute().parents) if f.exists())
        problem = others_can_swap(existing)
        if problem is None:
            continue
        made = "" if existing == folder else f" (where {folder} would be made)"
        raise Refused(f"{existing}{made}: {problem}, who could replace the report's files there; write the report "
                      "into a folder of your own")


def _tracked(workdir: Path, path: Path) -> int:
    return tracked_files(workdir, [path])


def run_set_inputs(results: Path, output_dir: str | None) -> dict:
    """write_report's arguments for the finished set `results` (results/<set>), read where
    the pipeline wrote its files; refused (one line naming what to run instead) where the
    set is not finished or its report is committed and no other directory was given."""
    if results.resolve().parent.name != "results" or not results.is_dir():
        raise Refused(f"{results}: not a run set's directory (results/<set>, as the pipeline lays it out)")
    reports = _reports_of(results)
    name, workdir = reports.name, reports.parent.parent
    missing = [f for f in FINISHED if not (results / f).is_file()]
    if missing:
        raise Refused(f"{results}/ is not a finished run set (no {', '.join(missing)}); the pipeline builds its "
                      f"report as it finishes: snakemake --cores all --config run_set={name}")
    out = Path(output_dir) if output_dir else reports
    refuse_links(out, out / "figures")
    refuse_shared(out, out / "figures")
    refuse_mount_points(("--output-dir", out), ("--output-dir", out / "figures"))
    # the folders of every set's report and evidence: the report would lie among the sets
    held = {reports.parent.resolve(): "report (reports/)", results.resolve().parent: "evidence (results/)"}
    if out.resolve() in held:
        raise Refused(f"--output-dir {output_dir}: the folder of every run set's {held[out.resolve()]}; this set's "
                      f"report goes to reports/{name}/ or a folder of its own")
    if out.resolve().is_relative_to(results.resolve()):  # its files would be extra to the evidence verify reads
        raise Refused(f"--output-dir {output_dir}: inside the run set {results}, whose evidence the report is made "
                      f"from; the report goes to reports/{name}/ or a folder of its own")
    if out.resolve() == reports.resolve() and _tracked(workdir, Path("reports") / name):
        raise Refused(f"reports/{name}/ holds a committed report, which is evidence and is not rewritten; to build "
                      f"this set's report elsewhere: sacscale report --run-set {results} --output-dir "
                      '"$(mktemp -d)"')
    try:
        inputs = set_inputs(results, reports)
    except RecordError as exc:
        raise Refused(str(exc)) from None
    copies = {}
    if inputs["video"]:
        # judged as the set's other inputs are: read without following a link, a video by
        # its content, within the set's byte budget; where the report goes elsewhere, what
        # was read is what is copied (into the staged report, with the record it was read with)
        limit = _budget(results)
        video = _video_bytes(inputs["video"], "", limit)
        if out.resolve() != reports.resolve():
            record = _record_bytes(inputs["video_record"], limit)
            copies = {"video": (Path("figures") / Path(inputs["video"]).name, video),
                      "video_record": (Path("figures") / Path(inputs["video_record"]).name, record)}
    return dict(inputs, output_md=out / "report.md", output_html=out / "report.html", figures_dir=out / "figures",
                copies=copies)


def _reports_of(results: Path) -> Path:
    """reports/<set> beside the set where it lies, the folder verify checks, however the set is
    named (through a link, with `..`): one set, one report folder. Named as given where that
    is the same folder (a checkout whose results/ and reports/ link to another disk: its
    page links docs/ as the checkout's reader follows them); refused, as verify refuses it,
    where another report lies beside the name given."""
    try:
        real = reports_dir(canonical_root(results))
    except ManifestError as exc:
        raise Refused(str(exc)) from None
    named = Path(os.path.abspath(results)).parent.parent / "reports" / real.name
    return named if os.path.realpath(named) == os.path.realpath(real) else real


def _budget(results: Path) -> int:
    """The set's byte budget (evidence.json's), the project's whole budget for an older set
    or one whose evidence.json verify names as bad."""
    try:
        held = scope.read_scope(results)
    except scope.ScopeError:
        return scope.BUDGET_BYTES
    return scope.budget_of(held) if held else scope.BUDGET_BYTES


def _refuse_foreign_link(option: str, path: str) -> None:
    """Refused where the video or its record is reached through another user's symbolic link,
    as the set's other inputs are: that user chose what root's report carries, copied in."""
    try:
        refuse_foreign_links(path, reading=True)
    except OSError as exc:
        raise Refused(f"{option}{path}: {exc.filename}: {exc.strerror}") from None


def _record_bytes(path: str, limit: int) -> bytes:
    _refuse_foreign_link("", path)
    try:
        return read_limited(path, limit)
    except (OSError, ValueError) as exc:
        raise Refused(f"{path}: cannot read it ({exc})") from None


def _refuse_outputs_on_inputs(args: argparse.Namespace) -> None:
    """An output is none of the inputs, none of the figures (the page written over
    scaling_bars.png), in none of the folders read (run and attempts folders) and in no run
    set the inputs come from (as `--output-dir` is not inside `--run-set`)."""
    outputs = [("--output-md", args.output_md), ("--output-html", args.output_html)]
    files = [n for n in NAMED + OPTIONAL if n not in ("output_md", "output_html", "figures_dir", "run_dirs",
                                                      "attempts_dir")]
    refuse_output_on_input(outputs, [(f"--{n.replace('_', '-')}", getattr(args, n)) for n in files])
    for option, output in outputs:
        refuse_output_inside(option, output, args.figures_dir)
        for folder in [*(args.run_dirs or []), *([args.attempts_dir] if args.attempts_dir else [])]:
            refuse_output_inside(option, output, folder)
    refuse_output_in_run_sets([*outputs, ("--figures-dir", args.figures_dir)],
                              [getattr(args, n) for n in files + ["run_dirs", "attempts_dir"]])


_VIDEO_MAGIC = {".webp": lambda head: head[:4] == b"RIFF" and head[8:12] == b"WEBP",
                ".gif": lambda head: head[:6] in (b"GIF87a", b"GIF89a")}


def _video_bytes(path: str, option: str, limit: int) -> bytes:
    """The best run's video: its WebP (an older set's GIF, as set_inputs.video_files reads),
    read without following a link (a link, FIFO or folder at its name is refused) and at
    most `limit` bytes (the set's budget: a sparse file of 300 MB was copied whole). Another
    file (`--video /etc/passwd`) was ignored, exit 0; each is refused in one line naming it
    (`option` before its path)."""
    suffix = Path(path).suffix.lower()
    if suffix not in _VIDEO_MAGIC:
        raise Refused(f"{option}{path}: not a WebP or GIF file (the best run's video is best_run.webp)")
    _refuse_foreign_link(option, path)
    try:
        with os.fdopen(open_regular(path), "rb") as stream:
            size = os.fstat(stream.fileno()).st_size
            data = stream.read(limit + 1) if size <= limit else b""
    except (OSError, ValueError) as exc:
        raise Refused(f"{option}{path}: cannot read it ({exc})") from None
    if size > limit or len(data) > limit:
        raise Refused(f"{option}{path}: {max(size, len(data)):,} bytes, more than the set's whole budget of "
                      f"{limit:,}: not the best run's video (render-best keeps it far smaller)")
    if not _VIDEO_MAGIC[suffix](data[:12]):
        raise Refused(f"{option}{path}: named {suffix} but not a {suffix[1:].upper()} file by its content")
    return data


def named_inputs(args: argparse.Namespace) -> dict:
    absent = [f"--{n.replace('_', '-')}" for n in NAMED if not getattr(args, n)]
    if absent:
        raise Refused(f"give --run-set results/<set>, or every input: {', '.join(absent)} missing")
    refuse_one_file(("--output-md", args.output_md), ("--output-html", args.output_html))
    for folder in [*(args.run_dirs or []), *([args.attempts_dir] if args.attempts_dir else [])]:
        if os.path.exists(folder) and not os.path.isdir(folder):  # read as a folder; a file was a run without events
            raise Refused(f"{folder}: {file_kind(folder)}, not a folder (--run-dirs and --attempts-dir take folders)")
    _refuse_outputs_on_inputs(args)
    video = _video_bytes(args.video, "--video ", scope.BUDGET_BYTES) if args.video else None
    folders = Path(args.output_md).parent, Path(args.output_html).parent, Path(args.figures_dir)
    refuse_links(*folders)
    refuse_shared(*folders)
    refuse_mount_points(*zip(("--output-md", "--output-html", "--figures-dir"), folders))
    folder = Path(args.output_md).parent.resolve()
    if not Path(args.figures_dir).resolve().is_relative_to(folder):  # checked before any figure is drawn
        raise Refused(f"--figures-dir {args.figures_dir}: not inside the report's folder {folder} (the report "
                      "shows its figures by a path relative to itself)")
    if Path(args.output_html).parent.resolve() != folder:  # the report is written, and moved in, as one folder
        raise Refused(f"--output-html {args.output_html}: not beside --output-md in {folder} (the page shows its "
                      "figures by a path relative to itself)")
    return dict(
        summary_path=args.summary, metrics_paths=args.metrics, output_md=args.output_md,
        output_html=args.output_html, figures_dir=args.figures_dir,
        environment=args.environment, model=args.model, probe=args.correctness,
        verification=args.verification, manifest=args.manifest_json, deviations=args.deviations,
        run_dirs=args.run_dirs, attempts=_attempts(args.attempts_dir), evaluations=args.evaluations,
        video=args.video, video_record=args.video_record, copies=_video_copy(args, folder, video),
    )


def _video_copy(args: argparse.Namespace, folder: Path, video: bytes | None) -> dict:
    """A video outside the report's folder copied into its figures folder, as `--run-set`
    copies the set's into a report built elsewhere: the page links its video by a path
    relative to itself, which must stay inside the folder that travels as the report. What
    was read and judged is what is copied, under the name the pipeline gives it (without its
    record the page shows no video, and none is copied)."""
    if video is None or not args.video_record or Path(args.video).resolve().is_relative_to(folder):
        return {}
    figures = Path(args.figures_dir).resolve().relative_to(folder)
    return {"video": (figures / f"best_run{Path(args.video).suffix.lower()}", video)}


def _written(inputs: dict, figures: Path) -> list[Path]:
    """The files the report is known to write, relative to its folder."""
    pages = [Path(inputs["output_md"]).name, NUMBERS_NAME, Path(inputs["output_html"]).name]
    return [Path(p) for p in pages] + [figures / name for name in FIGURES.values()] + \
        [rel for rel, _ in inputs["copies"].values()]


def _staged(inputs: dict, folder: Path, figures: Path, staging: Path) -> dict:
    """write_report's arguments writing into `staging` as into `folder`: the video the page
    shows from the report's folder (not copied) by the same path relative to the page, the
    copies written there first, the deviations document linked from the report's folder."""
    staged = dict(inputs, output_md=staging / Path(inputs["output_md"]).name,
                  output_html=staging / Path(inputs["output_html"]).name, figures_dir=staging / figures,
                  prepare=_deviations_linked_from(folder, inputs["deviations"]))
    copies = staged.pop("copies")
    if inputs["video"] and Path(inputs["video"]).resolve().is_relative_to(folder.resolve()):
        staged["video"] = str(staging / Path(inputs["video"]).resolve().relative_to(folder.resolve()))
    for name, (rel, data) in copies.items():
        (staging / rel).parent.mkdir(parents=True, exist_ok=True)
        (staging / rel).write_bytes(data)  # a private folder of ours, just made
        staged[name] = str(staging / rel)
    return staged


def _deviations_linked_from(folder: Path, deviations: str | None):
    """write_report's `prepare`: the deviations document, which is linked, not copied, linked
    by its path relative to the report's folder, not to the staging folder the page is written
    in (a document inside the report's folder was linked through the folder's own name)."""
    def prepare(others: dict) -> dict:
        from sacscale.report.build import link_from  # loaded by then: write_report calls this

        if deviations and others["deviations"] is not None:  # read and found a file
            others["deviations"] = link_from(folder, deviations)
        return others
    return prepare


def _shown(path) -> str:
    """A path as printed: a relative one that starts with `~` (a folder of that name, made
    by an unexpanded `--output-dir '~'`) with `./` before it, not read as the home folder."""
    text = str(path)
    return f"./{text}" if text.startswith("~") else text


def _refuse_live_runs(run_dirs: list | None) -> None:
    """A run a trainer is training in now: its curves so far would pass for the run's."""
    for run_dir in run_dirs or []:
        if live := live_trainer_problem(str(run_dir), "its learning curves", "report on"):
            raise Refused(f"{run_dir}: {live}")


def _unfound(exc: KeyError) -> str:
    key = exc.args[0] if exc.args else "?"
    return (f"the report's records name {str(key)[:40]!r}, which the record it looks that up in lacks: not "
            "records this pipeline wrote together; `sacscale verify` on the set names which one differs")


def run(args: argparse.Namespace) -> int:
    try:
        if args.run_set:
            given = [f"--{n.replace('_', '-')}" for n in NAMED + OPTIONAL if getattr(args, n)]
            if given:
                raise Refused(f"{', '.join(given)}: not read with --run-set, which reads the set's own files; give "
                              "--run-set alone, or every input without it")
            inputs = run_set_inputs(Path(args.run_set), args.output_dir)
        elif args.output_dir:
            raise Refused("--output-dir goes with --run-set")
        else:
            inputs = named_inputs(args)
        _refuse_live_runs(inputs["run_dirs"])
    except Refused as exc:
        say(f"sacscale report: {exc}", file=sys.stderr)
        return 2
    except OSError:
        raise  # one line naming the path and the problem in words, exit 2 (sacscale.cli)
    except RuntimeError as exc:  # a symbolic link loop (Path.resolve)
        say(f"sacscale report: error: {exc}", file=sys.stderr)
        return 2
    folder = Path(inputs["output_md"]).absolute().parent
    figures = Path(inputs["figures_dir"]).resolve().relative_to(folder.resolve())
    progress = stage_lines("report", args)
    progress.stage("loading the report's code (pandas, scipy, matplotlib)")
    # the tables and plots (pandas, scipy, matplotlib) load here, after the checks: a refusal answers without them
    from sacscale.report.build import run_set_of_inputs, write_report

    try:
        run_set = run_set_of_inputs(inputs["summary_path"], inputs["environment"])
        with staged_report(folder, _written(inputs, figures), run_set) as staging:
            progress.stage(f"drawing the figures of {len(inputs['metrics_paths'])} runs and writing the report "
                           f"into {folder}")
            write_report(**_staged(inputs, folder, figures, staging))
    except Refused as exc:
        say(f"sacscale report: {exc}", file=sys.stderr)
        return 2
    except OSError:
        raise  # a full disk, a read-only output: one line naming the file, exit 2 (sacscale.cli)
    except RecordError as exc:  # bad input: one line naming the file
        say(f"sacscale report: error: {exc}", file=sys.stderr)
        return 2
    except KeyError as exc:  # a cross-reference the reads above do not check: never a bare KeyError
        say(f"sacscale report: error: {_unfound(exc)}", file=sys.stderr)
        return 1
    except ValueError as exc:
        say(f"sacscale report: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    say(f"wrote {_shown(inputs['output_md'])} and {_shown(inputs['output_html'])}")
    return 0
