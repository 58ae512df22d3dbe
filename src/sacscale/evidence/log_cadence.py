"""A run's sittings and log intervals, derived from its event files: each sitting of the
trainer (the first, and one a `--resume`) writes one event file per rank, created after the
sitting's `start_time` and before the next sitting's, whose scalars start at the first
iteration the sitting logs after its checkpoint (`from_iteration`) and follow its
`log_every` (the trainer logs at every multiple of it and at the last iteration,
sacscale.train.rank). So train_meta.json `sittings` (count, `from_iteration`, `start_time`,
each `config.log_every`) is held to the files, and a `log_every` edited alike in the plan and
every record (10 -> 5) while the hashed events still log every 10 iterations is named."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from sacscale.analysis.events import Scalar
from sacscale.evidence.binding import first_record_time
from sacscale.evidence.logged_tags import tag_problems

# a scalar every interval's log writes, on every rank
LOGGED_EVERY_INTERVAL = "Perf/rank_env_steps"
# train_meta.json's times and the event files' are one host's clock; this allows rounding
CLOCK_SLACK_S = 2.0


@dataclass
class Sitting:
    start_time: object
    from_iteration: int
    every: int | None  # None: not recorded (see recorded_sittings)
    iterations: object
    source: str  # where `every` is recorded, for the messages


@dataclass
class EventFile:
    path: Path
    created: float | None
    steps: list[int]
    earliest: tuple[str, int, float] | None  # (tag, step, wall time) of its earliest scalar
    latest: tuple[str, int, float] | None
    tag_problems: list[str]  # its tags against the trainer's rule (sacscale.evidence.logged_tags)


def _int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _config(entry: dict) -> dict:
    return entry.get("config") if isinstance(entry.get("config"), dict) else {}


def recorded_sittings(meta: dict) -> tuple[list[Sitting], list[str]]:
    """The sittings train_meta.json records, first to last, and what is wrong in them.

    A resume overwrites the top-level `config` with its own and records its sitting in
    `sittings`, so the first sitting's interval of a resumed run is recorded nowhere: its
    events are then held to be regular under the interval they show (the gap to their first
    logged iteration, where the trainer first logs) and to reach the next sitting's start."""
    entries = meta.get("sittings", [])
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        return [], [f"train_meta.json sittings {str(entries)[:60]}: not a list of the trainer's sitting records"]
    if "sittings" in meta and not entries:
        # the trainer adds the key with the first resume's record (sacscale.train.record)
        return [], ["train_meta.json sittings []: the trainer writes sittings only on a resume, one record a "
                    "resumed sitting, and never an empty list"]
    config = _config(meta)
    first = Sitting(meta.get("start_time"), 0, None, None, "")
    if not entries:
        first.every, first.iterations = config.get("log_every"), config.get("iterations")
        first.source = "train_meta.json config, the command's --log-every and the plan's"
    sittings, problems = [first], []
    for i, entry in enumerate(entries):
        start = entry.get("from_iteration")
        if not (_int(start) and sittings[-1].from_iteration <= start):
            problems.append(f"train_meta.json sittings[{i}].from_iteration {start!r}: not an iteration at or after "
                            f"the previous sitting's start ({sittings[-1].from_iteration})")
            return sittings, problems
        sittings.append(Sitting(entry.get("start_time"), start, _config(entry).get("log_every"),
                                _config(entry).get("iterations"), f"train_meta.json sittings[{i}].config"))
    if entries and _config(entries[-1]).get("log_every") != config.get("log_every"):
        problems.append(f"train_meta.json config.log_every {config.get('log_every')!r}, but its last sitting's "
                        f"(sittings[-1].config) {_config(entries[-1]).get('log_every')!r}: the trainer records one")
    return sittings, problems


def _logged_steps(series: dict[str, list[Scalar]]) -> list[int]:
    return sorted({s.step for s in series.get(LOGGED_EVERY_INTERVAL, [])})


def _extremes(series: dict[str, list[Scalar]]) -> tuple[tuple | None, tuple | None]:
    scalars = [(s.wall_time, tag, s.step) for tag, values in series.items() for s in values]
    if not scalars:
        return None, None
    untimed = next((s for s in scalars if not math.isfinite(s[0])), None)
    if untimed is not None:  # NaN compares false with every bound: named as both ends
        named = (untimed[1], untimed[2], untimed[0])
        return named, named
    (first, first_tag, first_step), (last, last_tag, last_step) = min(scalars), max(scalars)
    return (first_tag, first_step, first), (last_tag, last_step, last)


def event_file_steps(by_rank_files: dict[int, list[tuple[Path, dict[str, list[Scalar]]]]]) -> dict[int, list]:
    """{rank: [EventFile, ...]} in the order the files were created (their first record)."""
    out = {}
    for rank, files in by_rank_files.items():
        found = [EventFile(path, first_record_time(path), _logged_steps(series), *_extremes(series),
                           tag_problems(series))
                 for path, series in files]
        out[rank] = sorted(found, key=lambda f: (f.created if f.created is not None else float("inf"), f.path.name))
    return out


def _expected_steps(every: int, start: int, last_logged: int, iterations) -> list[int]:
    """The iterations after `start`, up to the last one logged, at which the trainer logs."""
    steps = list(range((start // every + 1) * every, last_logged + 1, every))
    if _int(iterations) and start < iterations <= last_logged and iterations not in steps:
        steps.append(iterations)
    return sorted(steps)


def _difference(steps: list[int], expected: list[int]) -> str:
    """The logged steps the interval calls for that are missing, and those off it."""
    missing, extra = sorted(set(expected) - set(steps)), sorted(set(steps) - set(expected))
    parts = []
    if missing:
        parts.append(f"step{'s' if len(missing) > 1 else ''} {_shown(missing)} "
                     f"{'are' if len(missing) > 1 else 'is'} missing")
    if extra:
        parts.append(f"step{'s' if len(extra) > 1 else ''} {_shown(extra)} off the interval")
    return "; ".join(parts) or "its steps are out of order"


def _seen_interval(steps: list[int]) -> str:
    gaps = Counter(b - a for a, b in zip(steps, steps[1:]))
    return f"every {gaps.most_common(1)[0][0]} iterations" if gaps else f"only at iteration {steps[0]}"


def _shown(steps: list[int]) -> str:
    return ", ".join(str(s) for s in steps[:4]) + (", ..." if len(steps) > 4 else "")


def _time_problem(file: EventFile, sitting: Sitting, after: Sitting | None) -> str | None:
    start = sitting.start_time
    if file.created is None or not isinstance(start, (int, float)) or isinstance(start, bool):
        return None
    if file.created < start - CLOCK_SLACK_S:
        return f"created at {file.created:.3f}, before its sitting's start_time {start:.3f}"
    end = after.start_time if after else None
    if isinstance(end, (int, float)) and not isinstance(end, bool) and file.created > end + CLOCK_SLACK_S:
        return f"created at {file.created:.3f}, after the next sitting's start_time {end:.3f}"
    return None


def _scalar_time_problem(file: EventFile, sitting: Sitting, after: Sitting | None, end) -> str | None:
    """Every scalar lies in its sitting's window (its start_time to the next sitting's start or
    the trainer's end_time): the file's name and first record alone can be rewritten."""
    start, end_field = sitting.start_time, "the next sitting's start_time" if after else "train_meta.json's end_time"
    end = after.start_time if after else end
    if file.earliest is None:
        return None
    if not math.isfinite(file.earliest[2]):
        tag, step, when = file.earliest
        return f"log {tag} at step {step} at wall time {when}, which no sitting's window holds"
    if _time(start) and file.earliest[2] < start - CLOCK_SLACK_S:
        tag, step, when = file.earliest
        return (f"log {tag} at step {step} at {when:.3f}, {start - when:.1f} s before its sitting's start_time "
                f"{start:.3f}: another run's events")
    if _time(end) and file.latest[2] > end + CLOCK_SLACK_S:
        tag, step, when = file.latest
        return (f"log {tag} at step {step} at {when:.3f}, {when - end:.1f} s after {end_field} "
                f"{end:.3f}: another run's events")
    return None


def _time(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _why(steps: list[int], expected: list[int], alone: bool) -> str:
    """What a run of one sitting whose logged steps differ from its interval's shows."""
    if not alone:
        return ""
    missing = set(expected) - set(steps)
    if set(steps) < set(expected) and len(missing) < len(steps):  # a sparser interval misses half or more
        return ": logged step(s) deleted"
    return ": another run's events, or log_every edited"


def _steps_problem(file: EventFile, sitting: Sitting, after: Sitting | None, alone: bool) -> str | None:
    steps, start = file.steps, sitting.from_iteration
    every = sitting.every if sitting.every is not None else (steps[0] - start if steps else None)
    if not (_int(every) and every > 0):
        return None
    iterations = sitting.iterations
    if sitting.every is None and after and steps and steps[-1] == after.from_iteration:
        iterations = after.from_iteration  # it completed, and the resume continued from its end
    expected = _expected_steps(every, start, steps[-1], iterations) if steps else []
    if steps != expected:
        if sitting.every is None:
            return (f"log {LOGGED_EVERY_INTERVAL} at {_shown(steps)}: not every multiple of one interval "
                    f"(the trainer logs at each multiple of log_every; {_difference(steps, expected)})"
                    f"{_why(steps, expected, alone)}")
        if after or start:
            return (f"log {LOGGED_EVERY_INTERVAL} at {_shown(steps)}, but a sitting from iteration {start} with "
                    f"log_every {every} ({sitting.source}) logs at {_shown(expected)}: "
                    f"{_difference(steps, expected)}")
        return (f"log {LOGGED_EVERY_INTERVAL} {_seen_interval(steps)} (at {_shown(steps)}), but the run's "
                f"log_every is {every} ({sitting.source}): {_difference(steps, expected)}"
                f"{_why(steps, expected, alone)}")
    reach = (after.from_iteration // every) * every if after else 0
    if reach > start and (not steps or steps[-1] < reach):
        return (f"end at iteration {steps[-1] if steps else start}, but the next sitting resumed from iteration "
                f"{after.from_iteration} (logging every {every}, this sitting logged {reach} before that checkpoint)")
    return None


def _rank_problems(name: str, rank: int, files: list[EventFile], sittings: list[Sitting], end) -> list[str]:
    if len(files) != len(sittings):
        resumes = f"{len(sittings) - 1} resume(s) in its sittings" if len(sittings) > 1 else "never resumed"
        return [f"{name}: tb/rank{rank} holds {len(files)} event file(s), but train_meta.json records "
                f"{len(sittings)} sitting(s) ({resumes}); each sitting writes one a rank"]
    problems = []
    for k, (file, sitting) in enumerate(zip(files, sittings)):
        after = sittings[k + 1] if k + 1 < len(sittings) else None
        which = f"tb/rank{rank}"
        if len(sittings) > 1:
            which += f"/{file.path.name} (sitting {k + 1} of {len(sittings)}, from iteration {sitting.from_iteration})"
        timing, steps = _time_problem(file, sitting, after), _steps_problem(file, sitting, after, len(sittings) == 1)
        # a file created outside its sitting is named already; its scalars would repeat it
        scalars = None if timing else _scalar_time_problem(file, sitting, after, end)
        problems += [f"{name}: {which} events {p}" for p in (timing, steps, scalars) if p]
        problems += [f"{name}: {which} {p}" for p in file.tag_problems]
    return problems


def sitting_problems(name: str, meta: dict, run: dict, by_rank_files: dict | None) -> list[str]:
    """train_meta.json's sittings and intervals against each rank's event files."""
    sittings, problems = recorded_sittings(meta)
    problems = [f"{name}: {p}" for p in problems]
    command = run.get("command") if isinstance(run, dict) else None
    if len(sittings) > 1 and isinstance(command, list) and "--resume" not in command:
        problems.append(f"{name}: train_meta.json records {len(sittings) - 1} resumed sitting(s), but the run's "
                        "command (run.json) has no --resume: the pipeline starts every run fresh")
    if problems or not by_rank_files:
        return problems
    for rank, files in event_file_steps(by_rank_files).items():
        found = _rank_problems(name, rank, files, sittings, meta.get("end_time"))
        if found:
            return found  # one rank shows it; the others would repeat it
    return []
