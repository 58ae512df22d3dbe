"""The report's choice of the run it shows on video against the set's evaluations.

`sacscale render-best` records its choice beside the video (reports/S/figures/best_run.json)
after the manifest, so no hash binds it, and the report's video caption is written from it.
The choice is made again here from the set's hashed evaluations by the same rule
(sacscale.eval.best): the run, its score and figures and every run's score must be the ones
the evaluations give, and what the caption says of the video (its length, frame rate and
size) must be what the video file holds. The video itself is not rendered again (that takes
the policy, MuJoCo and a GL backend); the record names the checkpoint render-best rendered
(its SHA-256), which must be the one the chosen run's evaluation evaluated
(sacscale.evidence.planned_video).
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from PIL import Image

from sacscale.eval.best import best_run
from sacscale.eval.render import DEFAULT_COMMANDS
from sacscale.evidence.result import EvidenceStructureError, load_json, read_text, same_value
from sacscale.reading import loads_record, open_record
from sacscale.report.set_inputs import planned_runs

RECORD = Path("figures") / "best_run.json"
VIDEO_NAMES = ("best_run.webp", "best_run.gif")
CHOICE = ("run", "score", "tracking_lin", "tracking_yaw", "fall_rate", "env_steps", "scores", "rule")
# what render-best adds to the choice: the video and what its caption says of it
VIDEO_FIELDS = ("video", "seconds", "commands", "width", "height", "fps", "checkpoint_sha256")


def _evaluations(root: Path, runs: list[str]) -> dict[str, dict]:
    return {run: load_json(root, f"eval/{run}.json") for run in runs if (root / "eval" / f"{run}.json").is_file()}


def best_runs(root: Path, reports: Path | None) -> dict[str, str]:
    """{run: what names it the best} for the run the report shows on video (best_run.json's
    choice) and the best of the set's evaluations; a record or evaluation that cannot be
    read gives none here (best_video_problems names it)."""
    named = {}
    with contextlib.suppress(EvidenceStructureError, ValueError, KeyError, TypeError):
        fresh = best_run(_evaluations(root, planned_runs(root)))["run"]
        named[fresh] = "the best of the set's evaluations (sacscale.eval.best)"
    if reports is not None and (reports / RECORD).is_file():
        with contextlib.suppress(EvidenceStructureError, ValueError):
            stored = loads_record(read_text(reports / RECORD, RECORD.as_posix()))
            if isinstance(stored, dict) and isinstance(stored.get("run"), str):
                named.setdefault(stored["run"], f"the run the report shows as best ({RECORD.as_posix()})")
    return named


def best_video_problems(root: Path, reports: Path, rel: str) -> list[str]:
    """Each field of the recorded choice that the evaluations of the planned runs (in the
    plan's order, which breaks ties) do not give."""
    where = f"{rel}/{RECORD.as_posix()}"
    if not (reports / RECORD).is_file():
        return []
    try:
        stored = loads_record(read_text(reports / RECORD, where))
        evaluations = _evaluations(root, planned_runs(root))
    except (EvidenceStructureError, ValueError) as exc:  # RecordError is a ValueError
        return [f"{where}: cannot be checked ({exc}): does not match the evidence"]
    if not isinstance(stored, dict):
        return [f"{where}: not a record of a choice: does not match the evidence"]
    try:
        fresh = best_run(evaluations)
    except (ValueError, KeyError, TypeError) as exc:  # no evaluations, or one of another shape (named elsewhere)
        return [f"{where}: the set's evaluations give no choice ({type(exc).__name__}: {exc}): does not match the "
                "evidence"]
    problems = [f"{where}: {key} {str(stored.get(key))[:80]}, the set's evaluations give {str(fresh[key])[:80]}: "
                "does not match the evidence" for key in CHOICE if not same_value(stored.get(key), fresh[key])]
    problems += unwritten_keys(where, stored, (*CHOICE, *VIDEO_FIELDS), "render-best")
    return problems + [f"{where}: {p}: does not match the evidence" for p in video_problems(reports, stored)]


def unwritten_keys(where: str, stored: dict, written: tuple[str, ...], writer: str) -> list[str]:
    """Keys of a record that its writer does not write: text a browser shows beside the
    fields verify compares, which nothing checks."""
    extra = sorted(str(key) for key in stored if key not in written)
    if not extra:
        return []
    shown = ", ".join(repr(key[:40]) for key in extra[:5]) + (f" and {len(extra) - 5} more" if len(extra) > 5 else "")
    return [f"{where}: {shown}: not a field {writer} writes ({', '.join(written)}), so nothing checks what it says: "
            "does not match the evidence"]


def _frames(video: Path) -> tuple[int, tuple[int, int], list]:
    with open_record(video) as stream, Image.open(stream) as image:
        durations = []
        for index in range(getattr(image, "n_frames", 1)):
            image.seek(index)
            durations.append(image.info.get("duration"))
        return len(durations), image.size, durations


def video_problems(reports: Path, stored: dict) -> list[str]:
    """What the caption says of the video (its length, frame rate and size, from the record)
    against the video file: frames = seconds x fps, each 1000/fps ms where the file says; its
    commands, against those the pipeline renders."""
    name = stored.get("video")
    if name not in VIDEO_NAMES:
        return [f"video {str(name)[:40]!r} is not the video the stage writes ({', '.join(VIDEO_NAMES)})"]
    seconds, fps = stored.get("seconds"), stored.get("fps")
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0 for v in (seconds, fps)):
        return [f"seconds {str(seconds)[:20]} and fps {str(fps)[:20]} must be positive numbers"]
    try:
        count, size, durations = _frames(reports / "figures" / name)
    except (OSError, ValueError, Image.DecompressionBombError) as exc:
        return [f"its video {name} cannot be read ({exc})"]
    # the pipeline's render rule passes no --commands: render-best renders its default ones
    problems = [] if stored.get("commands") == DEFAULT_COMMANDS else \
        [f"says commands {str(stored.get('commands'))[:80]!r}, the pipeline's render rule renders render-best's "
         f"default {DEFAULT_COMMANDS!r}"]
    if count != round(seconds * fps):
        problems.append(f"says {seconds:g} s at {fps:g} fps, its video {name} has {count} frames")
    if size != (stored.get("width"), stored.get("height")):
        problems.append(f"says {stored.get('width')}x{stored.get('height')}, its video {name} is {size[0]}x{size[1]}")
    if all(d is not None for d in durations) and any(abs(d - 1000 / fps) > 1 for d in durations):
        problems.append(f"says {fps:g} fps, its video {name} shows frames for {sorted(set(durations))[:3]} ms")
    return problems

