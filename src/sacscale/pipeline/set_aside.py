"""What record-run sets aside in the attic: a failed attempt once it ends, and what an earlier
attempt left in the work folder (or an older run folder) before the run starts. A leftover is
named for what its run.json says it was (failed, timed out), `interrupted` where it has none
(a killed attempt's); a completed run left there (its move into place failed) is never set
aside as an attempt: the run is refused until the user deals with it. A leftover that cannot
be moved refuses the run, saying that nothing was run and what to do, rather than training a
run whose attempt could not be kept; one already copied whole into the attic whose source
could not be removed is removed, not copied there again."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path


from sacscale.long_names import error_text, name_that_fits
from sacscale.pipeline.moves import SourceLeft, copied_to, move, remove, remove_dead_copies
from sacscale.pipeline.run_folder_names import CUT_MARK, SET_ASIDE_AS, STAMP_PATTERN, WORK_SUFFIX, set_aside_name

Say = Callable[[str], None]

# the end of an attempt's name in the attic, after its run's name (cut or whole)
_SET_ASIDE_END = re.compile(rf"\.(?:{'|'.join(SET_ASIDE_AS)})-{STAMP_PATTERN}\Z")


def recorded_status(folder: Path) -> str | None:
    """The status the run.json in `folder` records, or None where it has none readable."""
    try:
        status = json.loads((folder / "run.json").read_text()).get("status")
    except (OSError, ValueError, AttributeError):
        return None
    return status if isinstance(status, str) else None


def leftover_why(work: Path) -> str:
    """Why a work folder found at the start is set aside: its run.json's status where that is
    an attempt's, else `interrupted` (a killed attempt writes none)."""
    status = recorded_status(work)
    return status if status in SET_ASIDE_AS else "interrupted"


def completed_leftover_problem(work_dir: Path, run_dir: Path) -> str | None:
    """A completed run left in the work folder (its move into place failed): never set aside
    as an attempt nor trained over; the problem in one line, else None."""
    if recorded_status(work_dir) != "completed":
        return None
    return (f"--work-dir {work_dir}: holds a completed run that was never moved into place (its run.json says "
            f"completed): move it to {run_dir} yourself, or move it away to record the run again")


def move_aside(path: Path, attic: Path, why: str, say: Say) -> Path | None:
    """Move `path` into the attic as `<run>.<why>-<stamp>`; where it is kept, None if it held
    nothing. Raises OSError, `path` whole, where it cannot be moved."""
    if not path.exists():
        return None
    if path.is_dir() and not any(path.iterdir()):
        path.rmdir()  # Snakemake creates the output's parent directory before the job
        return None
    run = path.name.lstrip(".").removesuffix(WORK_SUFFIX)
    if (copy := copied_to(path, attic, lambda name: _attempt_of(run, name, attic))) is not None:
        try:
            remove(path)  # what is left of an attempt already whole in the attic: not copied again
        except OSError as exc:
            raise OSError(exc.errno, f"what is left of an attempt already kept whole in {copy}, which cannot be "
                          f"removed ({error_text(exc)})") from exc
        say(f"removed {path}, what was left of an attempt already kept whole in {copy}")
        return copy
    attic.mkdir(parents=True, exist_ok=True)
    target = attic / set_aside_name(run, why, attic)
    try:
        move(path, target)  # the attic may be on another disk
    except SourceLeft as exc:
        say(f"copied {path} to {target}, but cannot remove it from {path} ({error_text(exc)}); what is left there "
            "is a copy: remove it yourself")
        return target
    say(f"moved {path} to {target}")
    return target


def _attempt_of(run: str, name: str, attic: Path) -> bool:
    """Whether `name` is one set_aside_name gives an attempt of `run` in `attic`."""
    end = _SET_ASIDE_END.search(name)
    return end is not None and name == name_that_fits(attic, "", run, end.group(), CUT_MARK)


def dead_copies_removed(run_dir: Path, attic: Path, state: Path | None, say: Say) -> None:
    """Remove this user's partial copies that a record-run killed mid-move left (hidden, often
    hundreds of megabytes on a RAM disk): of this run's completed run beside its run folder,
    of its learning state in its state folder, and of its attempts in the attic."""
    remove_dead_copies(run_dir.parent, run_dir.name, say)
    remove_dead_copies(attic, lambda name: _attempt_of(run_dir.name, name, attic), say)
    if state is not None:
        remove_dead_copies(state / run_dir.name, "checkpoints", say)


def set_aside(work: Path, attic: Path, why: str, say: Say) -> str:
    """Move a failed attempt to the attic; should even that fail (a full disk can refuse
    the attic's directory), leave it in its work folder, whole: it may hold a checkpoint a
    resume needs, and the work folder's name never reads as a complete run (the next run
    of it moves it to the attic). Where it is kept, said for the last line."""
    try:
        kept = move_aside(work, attic, why, say)
    except OSError as exc:
        say(f"cannot move {work} to {attic} ({error_text(exc)}); the attempt is left where it ran, in {work}")
        return f"Its log and run.json are kept where it ran, in {work}: the attic could not take them"
    return f"Its log and run.json are kept in {kept}" if kept else "It left nothing to keep: its work folder is gone"


def leftovers_set_aside(run_dir: Path, work_dir: Path, attic: Path, say: Say) -> str | None:
    """Set aside what an earlier attempt left (the work folder, an older run folder) before the
    run starts; where one cannot be, why in one line (nothing was run), else None."""
    for folder, why in ((work_dir, leftover_why(work_dir)), (run_dir, "superseded")):
        try:
            move_aside(folder, attic, why, say)
        except OSError as exc:
            return (f"{folder}: left by an earlier attempt, cannot be set aside in {attic} ({error_text(exc)}); "
                    f"nothing was run: remove what stands in the way, or move {folder} away yourself, then "
                    "run again")
    return None

