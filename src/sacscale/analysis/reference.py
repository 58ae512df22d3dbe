"""Reading a run of the reference trainer (PyPI `unilab==1.5.2`, `sacscale train-reference`):
where its run directory keeps its events, and those events in our tags.

The run directory: `trainer.json` names the trainer; the reference's own log root is
`ref_logs/`, its events in `ref_logs/G1WalkFlat/<timestamp>_mujoco/events.out.tfevents.*`
(stored `.gz` once the run completed). Their step is the cumulative env-step count (summed
over ranks). `read_events` gives them our tags: `Perf/total_env_steps` (value: that step;
one point per logged `Perf/total_fps` event, at its wall time), `Perf/total_fps`,
`Episode/length` (its `Train/mean_episode_length`), `Episode/return` (`Train/mean_reward`),
`Reward/<term>` (its `reward/<term>` x ctrl_dt), and every tag, these included, also under
`Ref/<tag>` as logged, so the same steady-rate definition applies to both trainers. What the
reference's tags measure, with the places in its source: docs/reference-trainer.md.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from pathlib import Path

from sacscale.analysis.events import EventFileError, Scalar, read_event_dir_keyed
from sacscale.reading import TooLarge, read_limited

# A run directory of `sacscale train-reference`: trainer.json names the trainer, the
# reference's own log root is a folder inside.
TRAINER_RECORD = "trainer.json"
LOG_ROOT_NAME = "ref_logs"
EVENT_SUBDIR = "G1WalkFlat"
# Their tag -> ours; the step of each of their events is the cumulative env-step count.
TAG_MAP = {"Perf/total_fps": "Perf/total_fps", "Train/mean_episode_length": "Episode/length",
           "Train/mean_reward": "Episode/return"}
STEP_CLOCK_TAG = "Perf/total_fps"  # logged once per logging interval: our env-step points
# Their per-term reward rate x ctrl_dt = our per-step weighted term (docs/reference-trainer.md)
REWARD_PREFIX, OUR_REWARD_PREFIX = "reward/", "Reward/"
REWARD_DT = 0.02  # G1WalkFlat's ctrl_dt in 1.5.2 (conf/sac/task/g1_walk_flat/base.yaml)


def is_reference_run(run_dir: str | Path) -> bool:
    record = Path(run_dir) / TRAINER_RECORD
    if not record.is_file():
        return False
    try:
        return json.loads(read_limited(record).decode("utf-8")).get("trainer") == "unilab"
    except (OSError, TooLarge, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EventFileError(f"{record}: unreadable trainer record ({exc})") from exc


def reference_log_root(run_dir: str | Path) -> Path:
    return Path(run_dir) / LOG_ROOT_NAME


def event_dir(log_root: str | Path) -> Path:
    """The one event directory a run with this log root wrote."""
    base = Path(log_root) / EVENT_SUBDIR
    found = sorted(p for p in base.glob("*_mujoco") if p.is_dir()) if base.is_dir() else []
    if not found:
        raise EventFileError(f"{base}: no <timestamp>_mujoco run directory of the reference trainer")
    if len(found) > 1:
        raise EventFileError(f"{base}: {len(found)} runs of the reference trainer "
                             f"({', '.join(p.name for p in found)}); one log root per run")
    return found[0]


# A reference run's scalars in our tags, by its event files' digests and its ctrl_dt: verify
# reads a run more than once (its metrics, its page), and renaming its thousands of points
# costs more than reading them from the parsed-file cache.
_RENAMED: OrderedDict[tuple, dict[str, list[Scalar]]] = OrderedDict()
_RENAMED_KEPT = 32


def read_events(log_root: str | Path) -> dict[str, list[Scalar]]:
    """The reference run's scalars in our tags (module docstring). Steps become our
    logging points' indices, 1, 2, ..."""
    folder = event_dir(log_root)
    files, theirs = read_event_dir_keyed(folder)
    clock = theirs.get(STEP_CLOCK_TAG)
    if not clock:
        raise EventFileError(f"{log_root}: the reference's events hold no '{STEP_CLOCK_TAG}'")
    dt = ctrl_dt(folder)
    if files is None:
        return _renamed(theirs, clock, dt)
    key = (files, dt)
    if key not in _RENAMED:
        _RENAMED[key] = _renamed(theirs, clock, dt)
        if len(_RENAMED) > _RENAMED_KEPT:
            _RENAMED.popitem(last=False)
    _RENAMED.move_to_end(key)
    lists: dict[int, list[Scalar]] = {}  # the caller's own lists, a tag's two names still one list
    return {tag: lists.setdefault(id(values), list(values)) for tag, values in _RENAMED[key].items()}


def _renamed(theirs: dict[str, list[Scalar]], clock: list[Scalar], dt: float) -> dict[str, list[Scalar]]:
    ours: dict[str, list[Scalar]] = {
        "Perf/total_env_steps": [Scalar(i + 1, s.wall_time, float(s.step)) for i, s in enumerate(clock)],
    }
    index = {s.step: i + 1 for i, s in enumerate(clock)}
    for tag, values in theirs.items():
        renamed = [Scalar(index.get(s.step, s.step), s.wall_time, s.value) for s in values]
        ours[f"Ref/{tag}"] = renamed
        if tag in TAG_MAP:
            ours[TAG_MAP[tag]] = renamed
        elif tag.startswith(REWARD_PREFIX) and tag != REWARD_PREFIX:
            ours[OUR_REWARD_PREFIX + tag[len(REWARD_PREFIX):]] = [Scalar(s.step, s.wall_time, s.value * dt)
                                                                 for s in renamed]
    return ours


def ctrl_dt(run_folder: str | Path) -> float:
    """The control step of a reference run (its run_config.json `config.env.ctrl_dt`), the
    dt its logged reward rates leave out; REWARD_DT when the file does not say."""
    record = Path(run_folder) / "run_config.json"
    try:
        value = json.loads(read_limited(record).decode("utf-8"))["config"]["env"]["ctrl_dt"]
    except FileNotFoundError:
        return REWARD_DT
    except (OSError, TooLarge, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError) as exc:
        raise EventFileError(f"{record}: no readable config.env.ctrl_dt ({exc})") from exc
    if not isinstance(value, (int, float)) or not value > 0:
        raise EventFileError(f"{record}: config.env.ctrl_dt is {value!r}, not a positive number")
    return float(value)
