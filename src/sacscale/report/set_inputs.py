"""Where a finished run set keeps each input of its report, as the pipeline lays it out:
results/<set>/ (the evidence), reports/<set>/ (the video and its record), logs/<set>/attempts
and docs/deviations.md of the checkout. `sacscale report --run-set` builds the report from
them, and verify composes the page again from the same files."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from sacscale.atomic import refuse_foreign_links
from sacscale.reading import NotRegularFile, loads_record, open_regular, read_limited
from sacscale.report.record_error import RecordError


def planned_runs(results: Path) -> list[str]:
    """The runs plan.json names, in its order."""
    try:
        return [r["name"] for r in loads_record(read_limited(results / "plan.json").decode("utf-8"))["runs"]]
    except (OSError, ValueError, RecursionError, KeyError, TypeError) as exc:
        why = f"{type(exc).__name__}: {exc}"
        raise RecordError(f"{results}/plan.json: not a plan this pipeline wrote ({why})") from None


def _not_through_foreign_link(path: Path) -> None:
    """RecordError naming `path` when it is reached through another user's symbolic link:
    root's report of that user's set would list, and link to, what root's own folders hold,
    in a file that user reads."""
    try:
        refuse_foreign_links(path, reading=True)
    except OSError as exc:
        where = path if exc.filename == str(path) else f"{path}: {exc.filename}"
        raise RecordError(f"{where}: {exc.strerror}") from None


def _existing(path: Path) -> str | None:
    _not_through_foreign_link(path)
    return str(path) if path.is_file() else None


def _attempts(folder: Path) -> list[str]:
    _not_through_foreign_link(folder)
    return sorted(e.name for e in folder.iterdir()) if folder.is_dir() else []


_KINDS = ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO"), (stat.S_ISDIR, "a folder"),
          (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"))


def _mode(path: Path) -> int:
    try:
        return os.lstat(path).st_mode
    except OSError:  # gone since: named as not a regular file
        return 0


def _regular(path: Path) -> bool:
    """Whether a regular file is at `path` (False where nothing is); RecordError naming it
    for anything else there (a FIFO left the video out of the report without a word)."""
    _not_through_foreign_link(path)
    try:
        os.close(open_regular(path))
    except FileNotFoundError:
        return False
    except NotRegularFile:
        kind = next((name for test, name in _KINDS if test(_mode(path))), "not a regular file")
        raise RecordError(f"{path}: {kind}, where the set keeps the best run's video or its record (render-best "
                          "writes files; the report would leave the video out)") from None
    except OSError as exc:
        raise RecordError(f"{path}: cannot open it ({exc.strerror})") from None
    return True


def video_files(reports: Path) -> tuple[Path, Path] | None:
    """The best run's video and its record in `reports`, where both are: a set made from now
    on has a WebP, an older set a GIF. Never found through another user's symbolic link (root
    copied the file it led to, root's own, into its report of that user's set), and anything
    but a regular file at their names is refused."""
    webp = reports / "figures" / "best_run.webp"
    record = reports / "figures" / "best_run.json"
    found = [path for path in (webp, webp.with_suffix(".gif"), record) if _regular(path)]
    video = webp if webp in found else webp.with_suffix(".gif")
    if (video in found) != (record in found):  # render-best writes both: one alone was removed or never copied
        have, lack = (video, record) if video in found else (record, webp)
        raise RecordError(f"{have}: here without {lack.name}, which render-best writes beside it (the caption "
                          "names the run and its scores from the record): restore both, or remove both for a "
                          "report without the video")
    return (video, record) if video in found else None


def set_inputs(results: Path, reports: Path) -> dict:
    """build.read_inputs' arguments (summary_path, metrics_paths and the others) for the
    finished set `results`, whose video lies in `reports`."""
    workdir = reports.parent.parent  # the checkout of the set's report folder: its docs/ and logs/
    runs = planned_runs(results)
    video = video_files(reports)
    return dict(
        summary_path=results / "summary.json", metrics_paths=[results / "metrics" / f"{r}.json" for r in runs],
        environment=_existing(results / "environment.json"), model=_existing(results / "model.json"),
        probe=_existing(results / "correctness.json"), verification=_existing(results / "verify.json"),
        manifest=_existing(results / "manifest.json"), deviations=_existing(workdir / "docs" / "deviations.md"),
        run_dirs=[results / "runs" / r for r in runs if (results / "runs" / r).is_dir()] or None,
        attempts=_attempts(workdir / "logs" / results.name / "attempts"),
        evaluations=[str(p) for r in runs if (p := results / "eval" / f"{r}.json").is_file()],
        video=str(video[0]) if video else None, video_record=str(video[1]) if video else None,
    )
