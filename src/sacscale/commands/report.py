"""`sacscale report`: the run set's Markdown and HTML report, with figures.

Two ways to call it: with every input named (as the workflow's report rule does), or
`--run-set results/S`, which reads a finished set's files where the pipeline put them
and rebuilds only its report (report.md, report.html, figures/): nothing under
results/S/ is written. A set whose report is committed keeps it; the report is then
built into `--output-dir`.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path

from sacscale.atomic import others_can_swap
from sacscale.commands._inputs import (
    refuse_one_file,
    refuse_output_in_run_sets,
    refuse_output_inside,
    refuse_output_on_input,
)
from sacscale.evidence.runset import _tracked as tracked_files
from sacscale.reading import open_record
from sacscale.report.build import RecordError, write_report
from sacscale.report.set_inputs import set_inputs

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
    parser.add_argument("--video", help="the best run's video (sacscale render-best), inside the report's directory")
    parser.add_argument("--video-record", help="its record of the choice (sacscale render-best --record)")
    parser.add_argument("--deviations", help="the Markdown file of deviations from the reference system; the report "
                        "links it (relative to the report's directory)")


class Refused(Exception):
    """A request this command will not carry out; its message is the one line to print."""


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
    name = results.name
    if results.resolve().parent.name != "results" or not results.is_dir():
        raise Refused(f"{results}: not a run set's directory (results/<set>, as the pipeline lays it out)")
    missing = [f for f in FINISHED if not (results / f).is_file()]
    if missing:
        raise Refused(f"{results}/ is not a finished run set (no {', '.join(missing)}); the pipeline builds its "
                      f"report as it finishes: snakemake --cores all --config run_set={name}")
    workdir = results.resolve().parent.parent  # results/<set> -> the checkout
    reports = workdir / "reports" / name
    out = Path(output_dir) if output_dir else reports
    refuse_links(out, out / "figures")
    refuse_shared(out, out / "figures")
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
    if inputs["video"] and out.resolve() != reports.resolve():
        # the report shows its video from its own directory: a copy goes with it, made
        # only once every record has been read (a refused record leaves no copy behind)
        inputs["prepare"] = partial(_copy_video, [inputs["video"], inputs["video_record"]], out / "figures")
    return dict(inputs, output_md=out / "report.md", output_html=out / "report.html", figures_dir=out / "figures")


def _copy_video(files: list[str], figures: Path, others: dict) -> dict:
    """build's arguments with the video copied into the report's own figures folder."""
    figures.mkdir(parents=True, exist_ok=True)
    video, _ = (shutil.copy2(f, figures / Path(f).name) for f in files)
    return dict(others, video=(Path(video), others["video"][1]))


@contextmanager
def _undone_on_failure(*folders: Path) -> Iterator[None]:
    """A report that fails part way leaves none of the files it made: the files new in
    `folders` are removed, and each folder it made is removed where it is left empty."""
    before = {folder: set(folder.iterdir()) if folder.is_dir() else None for folder in folders}
    try:
        yield
    except BaseException:
        for folder, held in reversed(before.items()):
            for path in (set(folder.iterdir()) if folder.is_dir() else set()) - (held or set()):
                if path.is_file() or path.is_symlink():
                    path.unlink(missing_ok=True)
            if held is None and folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()
        raise


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


def _refuse_not_a_video(path: str) -> None:
    """--video is the best run's WebP (an older set's GIF, as set_inputs.video_files
    reads): another file (`--video /etc/passwd`) was ignored, exit 0."""
    suffix = Path(path).suffix.lower()
    if suffix not in _VIDEO_MAGIC:
        raise Refused(f"--video {path}: not a WebP or GIF file (the best run's video is best_run.webp)")
    try:
        with open_record(path) as stream:
            head = stream.read(12)
    except (OSError, ValueError) as exc:
        raise Refused(f"--video {path}: cannot read it ({exc})") from None
    if not _VIDEO_MAGIC[suffix](head):
        raise Refused(f"--video {path}: named {suffix} but not a {suffix[1:].upper()} file by its content")


def named_inputs(args: argparse.Namespace) -> dict:
    absent = [f"--{n.replace('_', '-')}" for n in NAMED if not getattr(args, n)]
    if absent:
        raise Refused(f"give --run-set results/<set>, or every input: {', '.join(absent)} missing")
    refuse_one_file(("--output-md", args.output_md), ("--output-html", args.output_html))
    _refuse_outputs_on_inputs(args)
    if args.video:
        _refuse_not_a_video(args.video)
    folders = Path(args.output_md).parent, Path(args.output_html).parent, Path(args.figures_dir)
    refuse_links(*folders)
    refuse_shared(*folders)
    folder = Path(args.output_md).parent.resolve()
    if not Path(args.figures_dir).resolve().is_relative_to(folder):  # checked before any figure is drawn
        raise Refused(f"--figures-dir {args.figures_dir}: not inside the report's folder {folder} (the report "
                      "shows its figures by a path relative to itself)")
    return dict(
        summary_path=args.summary, metrics_paths=args.metrics, output_md=args.output_md,
        output_html=args.output_html, figures_dir=args.figures_dir,
        environment=args.environment, model=args.model, probe=args.correctness,
        verification=args.verification, manifest=args.manifest_json, deviations=args.deviations,
        run_dirs=args.run_dirs, attempts=_attempts(args.attempts_dir), evaluations=args.evaluations,
        video=args.video, video_record=args.video_record,
    )


def _folders_written(inputs: dict) -> list[Path]:
    """The folders the report writes in or makes, each before the ones inside it."""
    figures = Path(inputs["figures_dir"]).absolute()
    made = [f for f in figures.parents if not f.exists()]  # made on the way to the figures folder
    folders = {Path(inputs["output_md"]).absolute().parent, Path(inputs["output_html"]).absolute().parent,
               figures, *made}
    return sorted(folders, key=lambda folder: len(folder.parts))


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
    except Refused as exc:
        print(f"sacscale report: {exc}", file=sys.stderr)
        return 2
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symbolic link loop (Path.resolve)
        print(f"sacscale report: error: {exc}", file=sys.stderr)
        return 2
    try:
        with _undone_on_failure(*_folders_written(inputs)):
            write_report(**inputs)
    except OSError:
        raise  # a full disk, a read-only output: one line naming the file, exit 2 (sacscale.cli)
    except RecordError as exc:  # bad input: one line naming the file
        print(f"sacscale report: error: {exc}", file=sys.stderr)
        return 2
    except (ValueError, KeyError) as exc:
        print(f"sacscale report: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {inputs['output_md']} and {inputs['output_html']}")
    return 0
