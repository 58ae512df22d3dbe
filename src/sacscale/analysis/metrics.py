"""A run's throughput and outcome figures, computed from its event files.

The main figure (the seed's definition), from rank 0's `Perf/total_env_steps`:

    events ordered by step; n = len(events); w = events[n // 2:]
    steady env steps/s = (w[-1].value - w[0].value) / (w[-1].wall_time - w[0].wall_time)

i.e. cumulative env steps of all ranks gained over the last half of the logged points,
divided by the wall time between the same two points. Cold start (compile, graph
capture, replay warm-up) falls in the discarded first half.

A second, differently defined figure is kept under its own name: the mean of
`Perf/total_fps` (the trainer's instantaneous rate per logging interval) over the same
last half of its events. The seed's quick benchmark reported that one as "Steps/s"; it
must not be compared with the main figure.

The physics share, for either trainer where its events have a physics time: the physics
wall ms per iteration over the wall ms per iteration, both over the main figure's window
(the log points after its first event up to its last, i.e. the intervals the rate spans).
An iteration is one control step of each of a rank's envs (num_envs x world size env
steps); the wall ms per iteration is 1000 x window seconds x those env steps / window env
steps, which for ours is exactly the window's seconds per iteration. The physics time
per iteration (PHYSICS_MS_TAGS, the first a run has):

- ours: `Time/collector_physics_ms` (`--trace` only): the simulation pool's wall time on
  the iteration's step, summed over the slot's parts (with the halves pipeline much of it
  overlaps the collector's other work);
- the reference: `Ref/Perf/collector_env_step_backend_ms`: the backend (MuJoCo) part of one
  vectorised step of the rank's envs (docs/reference-trainer.md), i.e. per iteration.

Its own `Perf/iteration_time` (the learner loop's iteration) is kept beside it as
`trainer_iteration_ms` for a check, not used: its learner and collector overlap.

Final tracking: each `Reward/<term>` tracking term (the weighted per-step reward; the
reference's is put on that scale by analysis.reference.read_events) over its maximum
(perfect tracking), mean over ranks and over the log points in the run's last
FINAL_SPAN of env steps, so that both trainers average the same share of their run
whatever their logging interval.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

from sacscale.analysis import reference
from sacscale.analysis.events import (EventFileError, Scalar, event_files, merge_event_parts, rank_dirs,
                                     read_event_file, refuse_non_finite, run_within)
from sacscale.task.walk_rules import tracking_maxima
from sacscale.atomic import file_kind
from sacscale.reading import TooLarge, loads_record, read_limited
from sacscale.shapes import NUMBER, Maybe, record_problem

TOTAL_STEPS = "Perf/total_env_steps"
TOTAL_FPS = "Perf/total_fps"
RANK_STEPS = "Perf/rank_env_steps"
RANK_FPS = "Perf/rank_fps"
ITERATION = "Perf/iteration"
RETURN = "Episode/return"
LENGTH = "Episode/length"
TIME_PREFIX = "Time/"
# physics ms per iteration: ours (--trace), then the reference's (module docstring)
PHYSICS_MS_TAGS = ("Time/collector_physics_ms", "Ref/Perf/collector_env_step_backend_ms")
TRAINER_ITERATION_S = "Ref/Perf/iteration_time"
TRACKING_TERMS = ("tracking_lin_vel", "tracking_ang_vel")
FINAL_SPAN = 0.1  # final tracking: the last 10% of the run's env steps
# Tags read here that our trainer never logs non-finite: it drops a NaN scalar unwritten,
# stops on a non-finite learner metric, and its rewards and returns are finite by
# construction (a failed simulation's step earns nothing). An infinite value there was not
# written by the trainer, and would pass for "not logged" (null, n/a) in the figures.
FINITE_TAGS = frozenset({TOTAL_STEPS, TOTAL_FPS, RANK_STEPS, RANK_FPS, ITERATION, RETURN, LENGTH,
                         *(f"Reward/{term}" for term in TRACKING_TERMS), "Curriculum/penalty_scale"})


def _logged_finite(tag: str) -> bool:
    return tag in FINITE_TAGS or tag.startswith(TIME_PREFIX)

DEFINITIONS = {
    "steady_env_steps_per_s": (
        f"rank 0 '{TOTAL_STEPS}' events ordered by step, n = len(events), w = events[n // 2:]; "
        "(w[-1].value - w[0].value) / (w[-1].wall_time - w[0].wall_time). Env steps are control "
        "steps of one environment summed over all ranks."
    ),
    "tail_mean_total_fps": (
        f"mean of rank 0 '{TOTAL_FPS}' over its last 50% of events (events[n // 2:]); the trainer's "
        "per-interval instantaneous rate. A different figure: not comparable with steady_env_steps_per_s."
    ),
    "ranks[].steady_env_steps_per_s": f"the main definition applied to each rank's '{RANK_STEPS}'",
    "wall_time_s": "run.json end - start (the whole trainer process), when run.json exists",
    "event_span_s": f"wall time between the first and the last '{TOTAL_STEPS}' event",
    "final_episode_return": f"last logged value of rank 0 '{RETURN}' (mean over episodes ended in that interval)",
    "phase_ms": f"mean over the last 50% of events (events[n // 2:]) of each rank 0 '{TIME_PREFIX}*' tag, "
                "keyed by the tag without the prefix (traced runs only; the same as ranks[0].phase_ms)",
    "ranks[].phase_ms": f"the phase_ms definition applied to each rank's own '{TIME_PREFIX}*' tags "
                        "(empty when the run was not traced)",
    "physics_share": (
        "physics ms per iteration / wall ms per iteration over the main figure's window (module docstring): "
        f"the window mean of the first of {list(PHYSICS_MS_TAGS)} the run logged over "
        "1000 x window seconds x num_envs x world_size / window env steps; null: no physics time logged "
        "(ours without --trace) or no env count known"
    ),
    "final_tracking": (
        f"per tracking term (tracking_lin_vel, tracking_ang_vel): 'Reward/<term>' over its maximum (perfect "
        f"tracking, weight x 0.02), mean over ranks and over the log points in the last {FINAL_SPAN:.0%} of the "
        "run's env steps; null: not logged"
    ),
}

# Time to quality: when a run first reaches each learning-quality threshold. The value
# at a log point is the mean over ranks; a threshold counts as reached at the first log
# point whose trailing mean over QUALITY_WINDOW log points (it and the ones before) is at
# least the threshold, so that one lucky interval does not count.
QUALITY_THRESHOLDS = {
    "episode_length": ("Episode/length", 950.0),  # of 1000: the robot survives its episodes
    "normalised_tracking_lin_vel": ("Reward/tracking_lin_vel", 0.65),  # per-step reward / its maximum
    "normalised_tracking_ang_vel": ("Reward/tracking_ang_vel", 0.65),
}
QUALITY_WINDOW = 5

DEFINITIONS["time_to_quality"] = (
    "per threshold (QUALITY_THRESHOLDS: episode length >= 950, normalised lin-vel and yaw-rate tracking "
    ">= 0.65, the reward term over its maximum): the first log point at which the mean over ranks, "
    f"averaged over that point and the {QUALITY_WINDOW - 1} before it, reaches the threshold; its "
    f"iteration, rank 0 '{TOTAL_STEPS}' and seconds since the run started (train_meta.json start_time; "
    f"the first '{TOTAL_STEPS}' event when absent). null: not reached in the run"
)

RUN_NAME = re.compile(r"^(?P<prefix>.+)_r(?P<repeat>\d+)_(?P<config>[^/]+)$")


class MetricError(ValueError):
    """Events that exist but cannot give the figure (too few points, no elapsed time)."""


def steady_rate(events: list[Scalar], source: str) -> dict:
    """The main figure over `events` (any order; sorted by step here)."""
    ordered = sorted(events, key=lambda s: (s.step, s.wall_time))
    n = len(ordered)
    window = ordered[n // 2 :]
    if len(window) < 2:
        raise MetricError(
            f"{source}: {n} event(s); the last-50% window needs at least 2 (log more often or run longer)"
        )
    first, last = window[0], window[-1]
    seconds = last.wall_time - first.wall_time
    if seconds <= 0:
        raise MetricError(f"{source}: no wall time elapses across the window (steps {first.step}..{last.step})")
    gained = last.value - first.value
    return {
        "steady_env_steps_per_s": gained / seconds,
        "window": {
            "events": n,
            "window_events": len(window),
            "first_step": first.step,
            "last_step": last.step,
            "env_steps": gained,
            "seconds": seconds,
        },
    }


def tail_mean(events: list[Scalar]) -> float | None:
    ordered = sorted(events, key=lambda s: (s.step, s.wall_time))
    tail = ordered[len(ordered) // 2 :]
    return sum(s.value for s in tail) / len(tail) if tail else None


def phase_means(tags: dict[str, list[Scalar]]) -> dict[str, float]:
    """`{phase: tail mean}` of one rank's `Time/<phase>` tags (empty for an untraced run)."""
    return {
        tag[len(TIME_PREFIX) :]: tail_mean(values)
        for tag, values in sorted(tags.items())
        if tag.startswith(TIME_PREFIX) and values
    }


def window_mean(events: list[Scalar] | None, window: dict) -> float | None:
    """Mean of the finite values logged at the steps the rate's window spans (after its first
    event, up to its last: each value describes the interval that ends at its step)."""
    values = [s.value for s in events or () if window["first_step"] < s.step <= window["last_step"]
              and math.isfinite(s.value)]
    return sum(values) / len(values) if values else None


def physics(tags: dict[str, list[Scalar]], window: dict, env_steps_per_iteration: float | None) -> dict | None:
    """{"physics_ms", "iteration_ms", "share", "source", "trainer_iteration_ms"} of one rank's
    tags over the rate's window (module docstring); None when it logged no physics time."""
    source = next((tag for tag in PHYSICS_MS_TAGS if tags.get(tag)), None)
    if source is None or not env_steps_per_iteration or window["env_steps"] <= 0:
        return None
    physics_ms = window_mean(tags[source], window)
    if physics_ms is None:
        return None
    iteration_ms = 1e3 * window["seconds"] * env_steps_per_iteration / window["env_steps"]
    own = window_mean(tags.get(TRAINER_ITERATION_S), window)
    return {"physics_ms": physics_ms, "iteration_ms": iteration_ms, "share": physics_ms / iteration_ms,
            "source": source, "trainer_iteration_ms": None if own is None else 1e3 * own}


def _env_steps_per_iteration(run_json: dict | None, is_reference: bool, window: dict) -> float | None:
    """num_envs x world size from the run record; for ours without one, from the window
    (our steps are iterations). None: not known (a reference run without its record)."""
    resolved = (run_json or {}).get("resolved_config") or {}
    if resolved.get("num_envs") and resolved.get("world_size"):
        return float(resolved["num_envs"]) * float(resolved["world_size"])
    if not is_reference and window["last_step"] > window["first_step"]:
        return window["env_steps"] / (window["last_step"] - window["first_step"])
    return None


def final_tracking(per_rank: dict[int, dict[str, list[Scalar]]]) -> dict[str, float | None]:
    """{term: normalised tracking at the end of the run}, see DEFINITIONS["final_tracking"]."""
    total = {s.step: s.value for s in per_rank[0].get(TOTAL_STEPS, [])}
    start = (1.0 - FINAL_SPAN) * max(total.values(), default=0.0)
    maxima = tracking_maxima()
    out: dict[str, float | None] = {}
    for term in TRACKING_TERMS:
        values = [s.value / maxima[term] for tags in per_rank.values() for s in tags.get(f"Reward/{term}", [])
                  if s.step in total and total[s.step] >= start and math.isfinite(s.value)]
        out[term] = sum(values) / len(values) if values else None
    return out


def _last(events: list[Scalar] | None) -> float | None:
    return events[-1].value if events else None


def _finite_or_none(x):
    return x if x is None or math.isfinite(x) else None


# what is read of a run's records, of its type: a list or a string where an object goes, or a
# count as a string, ended in an AttributeError or ValueError naming no file
_RESOLVED = {"run": Maybe(str), "config": Maybe(str), "repeat": Maybe(int), "devices": Maybe(str),
             "world_size": Maybe(int), "num_envs": Maybe(int)}
RUN_JSON_SHAPE = {"resolved_config": Maybe(_RESOLVED), "duration_s": Maybe(NUMBER), "exit_status": Maybe(int)}
META_SHAPE = {"sittings": Maybe(list), "start_time": Maybe(NUMBER)}


def _read_json(path: Path, shape: dict) -> dict | None:
    """The record at `path`, None where there is none; a folder or device at its name is named,
    not taken for a missing record (the run analysed as if it had none)."""
    if not path.is_file():
        kind = file_kind(path)
        if kind is not None:
            raise EventFileError(f"{path}: {kind}, not the record the trainer or the run wrapper writes there")
        return None
    try:
        value = loads_record(read_limited(path).decode("utf-8"))
    except TooLarge as exc:
        raise EventFileError(f"{path}: {exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EventFileError(f"{path}: not valid JSON ({exc})") from None
    problem = record_problem(value, shape)
    if problem:
        raise EventFileError(f"{path}: not a record the trainer or the run wrapper wrote ({problem})")
    return value


def _identity(run_dir: Path, run_json: dict | None) -> dict:
    info = {"run": run_dir.name, "config": None, "repeat": None, "devices": None, "world_size": None}
    match = RUN_NAME.match(run_dir.name)
    if match:
        info.update(config=match.group("config"), repeat=int(match.group("repeat")))
    if run_json:
        resolved = run_json.get("resolved_config", {})
        for key in ("run", "config", "repeat", "devices", "world_size"):
            if resolved.get(key) is not None:
                info[key] = resolved[key]
    return info


def _series(events: list[Scalar] | None, t0: float) -> list[list[float]]:
    return [[round(s.wall_time - t0, 6), s.step, s.value] for s in (events or [])]


def sitting_count(run_dir: Path) -> int:
    """How many sittings train_meta.json records (`--resume` adds one each)."""
    return 1 + len((_read_json(Path(run_dir) / "train_meta.json", META_SHAPE) or {}).get("sittings", []))


def run_events(run_dir: Path) -> tuple[dict[int, Path], dict[int, dict[str, list[Scalar]]]]:
    """({rank: event dir}, {rank: {tag: events}}) of a run of ours, or of the reference
    trainer (`sacscale train-reference`: its events in our tags, as rank 0)."""
    if reference.is_reference_run(run_dir):
        root = reference.reference_log_root(run_dir)
        return {0: reference.event_dir(root)}, {0: reference.read_events(root)}
    sittings = sitting_count(run_dir)
    run_dir, within = run_within(run_dir)
    dirs = rank_dirs(run_dir, within)
    for rank, path in dirs.items():
        files = event_files(path, within)
        if len(files) > sittings:
            # more writers than the run's sittings (`--resume` adds one each): two runs in
            # one --log-dir, whose steps and wall times interleave; any rate from them is wrong
            raise EventFileError(f"{path}: {len(files)} event files for rank {rank} "
                                 f"({', '.join(f.name for f in files)}) but the run had {sittings} sitting(s) "
                                 "(train_meta.json): one run per directory is expected")
    return dirs, {rank: merge_event_parts([_read_finite(f, within) for f in event_files(path, within)])
                  for rank, path in dirs.items()}


def _read_finite(path: Path, within: Path) -> dict[str, list[Scalar]]:
    """One event file of ours, as read_event_dir reads it; EventFileError at a non-finite
    value of a tag the trainer never logs non-finite (FINITE_TAGS)."""
    series = read_event_file(path, within)
    refuse_non_finite(path, series, _logged_finite)
    return series


def time_to_quality(per_rank: dict[int, dict[str, list[Scalar]]], start_time: float) -> dict:
    """{threshold name: {"threshold", "iteration", "env_steps", "seconds"} or None}, see
    DEFINITIONS["time_to_quality"]."""
    total = {s.step: s for s in per_rank[0].get(TOTAL_STEPS, [])}
    maxima = tracking_maxima()
    out: dict[str, dict | None] = {}
    for name, (tag, threshold) in QUALITY_THRESHOLDS.items():
        scale = maxima[name.removeprefix("normalised_")] if name.startswith("normalised_") else 1.0
        by_step: dict[int, list[float]] = {}
        for tags in per_rank.values():
            for s in tags.get(tag, []):
                if math.isfinite(s.value):
                    by_step.setdefault(s.step, []).append(s.value / scale)
        points = [(step, sum(v) / len(v)) for step, v in sorted(by_step.items()) if step in total]
        out[name] = None
        for i in range(QUALITY_WINDOW - 1, len(points)):
            window = [v for _, v in points[i - QUALITY_WINDOW + 1:i + 1]]
            if sum(window) / QUALITY_WINDOW >= threshold:
                at = total[points[i][0]]
                out[name] = {"threshold": threshold, "iteration": at.step, "env_steps": at.value,
                             "seconds": round(at.wall_time - start_time, 3)}
                break
    return out


def analyze_run(run_dir: str | Path) -> dict:
    """All figures of one run directory, as a JSON-ready dict. Reads every event."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise EventFileError(f"{run_dir}: run directory is missing")
    run_json = _read_json(run_dir / "run.json", RUN_JSON_SHAPE)
    dirs, per_rank = run_events(run_dir)
    is_reference = reference.is_reference_run(run_dir)
    rank0 = per_rank[0]
    source0 = dirs[0]
    if not rank0.get(TOTAL_STEPS):
        raise EventFileError(f"{source0}: no '{TOTAL_STEPS}' events in rank 0's event files")

    main = steady_rate(rank0[TOTAL_STEPS], f"{source0} '{TOTAL_STEPS}'")
    total = sorted(rank0[TOTAL_STEPS], key=lambda s: (s.step, s.wall_time))
    t0 = total[0].wall_time

    ranks = []
    for rank, tags in per_rank.items():
        entry = {"rank": rank, "event_dir": str(dirs[rank].relative_to(run_dir))}
        if tags.get(RANK_STEPS):
            rate = steady_rate(tags[RANK_STEPS], f"{dirs[rank]} '{RANK_STEPS}'")
            entry.update(
                steady_env_steps_per_s=rate["steady_env_steps_per_s"],
                window=rate["window"],
                env_steps=_last(tags[RANK_STEPS]),
            )
        if tags.get(RANK_FPS):
            entry["tail_mean_fps"] = tail_mean(tags[RANK_FPS])
        if tags.get(ITERATION):
            entry["iterations"] = int(_last(tags[ITERATION]))
        entry["phase_ms"] = phase_means(tags)
        ranks.append(entry)

    phases = phase_means(rank0)
    phys = physics(rank0, main["window"], _env_steps_per_iteration(run_json, is_reference, main["window"]))

    wall_time = None
    if run_json and run_json.get("duration_s") is not None:
        wall_time = float(run_json["duration_s"])
    iterations = int(_last(rank0.get(ITERATION))) if rank0.get(ITERATION) else total[-1].step

    result = {
        **_identity(run_dir, run_json),
        "steady_env_steps_per_s": main["steady_env_steps_per_s"],
        "window": main["window"],
        "tail_mean_total_fps": tail_mean(rank0[TOTAL_FPS]) if rank0.get(TOTAL_FPS) else None,
        "total_env_steps": total[-1].value,
        "iterations": iterations,
        "wall_time_s": wall_time,
        "event_span_s": total[-1].wall_time - t0,
        "final_episode_return": _finite_or_none(_last(rank0.get(RETURN))),
        "final_episode_length": _finite_or_none(_last(rank0.get(LENGTH))),
        "ranks": ranks,
        "phase_ms": phases,
        "physics_share": phys["share"] if phys else None,
        "physics": phys,
        "final_tracking": final_tracking(per_rank),
        "exit_status": run_json.get("exit_status") if run_json else None,
        "definitions": DEFINITIONS,
        "series": {
            "t0_wall_time": t0,
            "columns": ["seconds_since_first_total_env_steps_event", "step", "value"],
            "total_env_steps": _series(total, t0),
            "total_fps": _series(rank0.get(TOTAL_FPS), t0),
            "episode_return": _series(rank0.get(RETURN), t0),
            "episode_length": _series(rank0.get(LENGTH), t0),
        },
    }
    if result["world_size"] is None:
        result["world_size"] = len(per_rank)
    meta = _read_json(run_dir / "train_meta.json", META_SHAPE) or {}
    result["time_to_quality"] = time_to_quality(per_rank, float(meta.get("start_time", t0)))
    return result


# Figures that verification recomputes and compares (numbers only, exact up to float noise).
COMPARED = (
    "steady_env_steps_per_s",
    "tail_mean_total_fps",
    "total_env_steps",
    "iterations",
    "event_span_s",
    "final_episode_return",
    "final_episode_length",
)


def differences(stored: dict, recomputed: dict, rel_tol: float = 1e-9) -> list[str]:
    """Names (with both values) of compared figures that differ between two results."""
    out = []
    for key in COMPARED:
        a, b = stored.get(key), recomputed.get(key)
        if a is None and b is None:
            continue
        if a is None or b is None or not math.isclose(float(a), float(b), rel_tol=rel_tol, abs_tol=1e-12):
            out.append(f"{key}: stored {a!r}, recomputed {b!r}")
    stored_ranks = {r.get("rank"): r for r in stored.get("ranks", [])}
    for entry in recomputed.get("ranks", []):
        old = stored_ranks.get(entry["rank"], {})
        a, b = old.get("steady_env_steps_per_s"), entry.get("steady_env_steps_per_s")
        if (a is None) != (b is None) or (
            a is not None and not math.isclose(float(a), float(b), rel_tol=rel_tol, abs_tol=1e-12)
        ):
            out.append(f"ranks[{entry['rank']}].steady_env_steps_per_s: stored {a!r}, recomputed {b!r}")
    return out
