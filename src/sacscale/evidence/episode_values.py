"""The `Episode/*` values of each rank's event files held to what the trainer can log
(sacscale.train.logs._episode_scalars: means over the episodes that ended in a log
interval, logged at the interval's last iteration):

- `Episode/fall_rate`: the episodes that ended by a fall over those that ended (a fall ends
  its episode), so in [0, 1];
- `Episode/length`: an episode's steps since its env's last reset, at least 1; an episode
  times out once its env's time-out counter reaches the task's `episode_length` (the counter
  starts at a random point of an episode, so a first episode is shorter), and the envs of a
  sitting start fresh and step once an iteration, so at most `episode_length` and at most the
  iterations of its sitting by that log point (the sitting's `from_iteration` where
  train_meta.json records it; else 0, a looser bound);
- `Episode/return`: at most `length` x the largest per-step reward the task's weights allow
  (reward_ceiling). No floor is held: the penalty terms (body rates, pose) have no bound the
  task guarantees.

A mean keeps each of these bounds, so they hold for the logged means too."""

from __future__ import annotations

from sacscale.analysis.events import Scalar
from sacscale.evidence.log_cadence import recorded_sittings
from sacscale.task.walk_rules import TaskConfig

# the weighted terms in [0, 1] before their weight: the tracking and foot-phase kernels exp(-x)
# and alive (1); every other term is a sum of squares with a negative weight, so at most 0
BOUNDED_TERMS = ("tracking_lin_vel", "tracking_ang_vel", "feet_phase", "alive")
# float32 logging and float64 sums: a legitimate return sits this close to its ceiling at most
RETURN_SLACK = 1e-5
SHOWN = 3


def reward_ceiling(cfg: TaskConfig | None = None) -> float:
    """The largest reward one control step can give: each positive term's weight at a term
    of 1 (penalty terms give at most 0; a failed simulation's step gives 0)."""
    cfg = cfg or TaskConfig()
    return sum(max(cfg.reward_weights[term], 0.0) for term in BOUNDED_TERMS) * cfg.reward_dt_scale


def _at(series: dict[str, list[Scalar]], tag: str) -> dict[int, float]:
    return {s.step: s.value for s in series.get(tag, [])}


def _step_problems(step: int, values: dict[str, float], from_iteration: int) -> list[str]:
    """What in one log point's episode means the trainer cannot have logged."""
    problems = []
    rate = values.get("Episode/fall_rate")
    if rate is not None and not 0.0 <= rate <= 1.0:
        problems.append(f"Episode/fall_rate {rate:.9g} at step {step}: a share of the ended episodes, in [0, 1]")
    length = values.get("Episode/length")
    cap = min(TaskConfig.episode_length, step - from_iteration)
    if length is not None and not 1.0 <= length <= max(cap, 1):
        why = (f"the task's episode_length is {TaskConfig.episode_length}" if cap == TaskConfig.episode_length
               else f"the sitting's envs have stepped {step - from_iteration} time(s) since iteration {from_iteration}")
        problems.append(f"Episode/length {length:.9g} at step {step}: an episode lasts 1 step or more, and {why}")
    ret = values.get("Episode/return")
    if ret is not None and length is not None and 1.0 <= length and \
            not ret <= reward_ceiling() * length * (1 + RETURN_SLACK):
        problems.append(f"Episode/return {ret:.9g} at step {step}: above {reward_ceiling():g} (the task's largest "
                        f"reward a step) x its Episode/length {length:.9g}")
    return problems


def file_problems(series: dict[str, list[Scalar]], from_iteration: int) -> list[str]:
    """Every impossible episode value of one event file (tails of lines naming the file)."""
    by_tag = {tag: _at(series, tag) for tag in ("Episode/return", "Episode/length", "Episode/fall_rate")}
    steps = sorted(set().union(*by_tag.values()))
    problems = []
    for step in steps:
        problems += _step_problems(step, {tag: at[step] for tag, at in by_tag.items() if step in at}, from_iteration)
    return problems


def _starts(meta: dict, count: int) -> list[int]:
    """Each event file's sitting start where train_meta.json's sittings pair with the files
    (one a sitting), else 0 for each (no sitting starts before iteration 0)."""
    sittings, problems = recorded_sittings(meta)
    if problems or len(sittings) != count:
        return [0] * count
    return [sitting.from_iteration for sitting in sittings]


def episode_value_problems(name: str, meta: dict, by_rank_files: dict | None) -> list[str]:
    """Each rank's event files' episode values the trainer cannot have logged, each named
    with its file, step and value (the first SHOWN of a file, and how many more)."""
    problems = []
    for rank, files in sorted((by_rank_files or {}).items()):
        for (path, series), start in zip(files, _starts(meta, len(files))):
            found = file_problems(series, start)
            more = f" (and {len(found) - SHOWN} more such value(s) in this file)" if len(found) > SHOWN else ""
            problems += [f"{name}: tb/rank{rank}/{path.name} logs {p}: the trainer cannot log that"
                         for p in found[:SHOWN]]
            if more:
                problems[-1] += more
    return problems
