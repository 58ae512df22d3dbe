"""Which tags an event file logs at each of its logged iterations, held to the trainer's rule
(sacscale.train.logs.log_interval writes every scalar of an interval at one step, once):

- every tag appears at most once at a step, and only at a step the file logs
  (`Perf/rank_env_steps`, written at every log point);
- the episode tags are written together, at each interval in which an episode ended (none
  ended: none of them), so a step holds all of those the file logs or none;
- the learner's tags are written from the first log point at which the learner is ready
  (its replay holds `learning_starts` rows; the replay only grows within a sitting), so from
  their first step on, at every step; in a run of one sitting that first step is also held to
  the one its recorded config gives (learner_start_problems);
- every other tag is written at every log point (a NaN is left out, which the trainer's sums
  do not produce for them).

A tag a file never logs is not held: older trainers logged fewer tags (no `Faults/*`, no
`Episode/fall_rate`, fewer reward terms, no `Time/collector_physics*`), so the tags a file
holds at all are the ones its trainer wrote (a tag removed from every step of a file is not
seen here, but where the record requires it: sacscale.evidence.required_tags)."""

from __future__ import annotations

from collections import Counter

from sacscale.analysis.events import Scalar
from sacscale.train.log_tags import LEARNER_METRIC_TAGS

STEP_TAG = "Perf/rank_env_steps"
EPISODE_TAGS = ("Episode/return", "Episode/length", "Episode/fall_rate")
LEARNER_TAGS = tuple(tag for _, tag in LEARNER_METRIC_TAGS)
SHOWN_TAGS = 3


def _times(count: int) -> str:
    return "twice" if count == 2 else f"{count} times"


def _tags(tags: list[str]) -> str:
    shown = ", ".join(tags[:SHOWN_TAGS])
    return shown + (f" and {len(tags) - SHOWN_TAGS} more tag(s)" if len(tags) > SHOWN_TAGS else "")


def _elsewhere(lines: list[str], what: str) -> list[str]:
    """The first line of a kind, with how many more steps show it (one is enough to see)."""
    if len(lines) > 1:
        return [f"{lines[0]} (and {what} at {len(lines) - 1} other step(s))"]
    return lines


def _duplicates(series: dict[str, list[Scalar]]) -> list[str]:
    by_step: dict[tuple[int, int], list[str]] = {}
    for tag, values in sorted(series.items()):
        for step, count in sorted(Counter(s.step for s in values).items()):
            if count > 1:
                by_step.setdefault((step, count), []).append(tag)
    lines = [f"logs {_tags(tags)} {_times(count)} at step {step}: the trainer writes each tag once a log point"
             for (step, count), tags in sorted(by_step.items())]
    return _elsewhere(lines, "the same")


def _off_steps(series: dict[str, list[Scalar]], logged: set[int]) -> list[str]:
    by_step: dict[int, list[str]] = {}
    for tag, values in sorted(series.items()):
        for step in sorted({s.step for s in values} - logged):
            by_step.setdefault(step, []).append(tag)
    lines = [f"logs {_tags(tags)} at step {step}, where it logs no {STEP_TAG}: the trainer writes every tag "
             f"of a log point at once" for step, tags in sorted(by_step.items())]
    return _elsewhere(lines, "tags off its log points")


def _expected_at(tag: str, step: int, present: set[str], first_step: dict[str, int]) -> bool:
    """Whether the trainer that wrote this file logged `tag` at this logged step."""
    if tag in EPISODE_TAGS:
        return any(t in present for t in EPISODE_TAGS)
    if tag in LEARNER_TAGS:
        return step >= min(first_step[t] for t in LEARNER_TAGS if t in first_step)
    return True


def _gaps(series: dict[str, list[Scalar]], logged: list[int]) -> list[str]:
    steps_of = {tag: {s.step for s in values} for tag, values in series.items()}
    first_step = {tag: min(steps) for tag, steps in steps_of.items() if steps}
    lines = []
    for step in logged:
        present = {tag for tag, steps in steps_of.items() if step in steps}
        missing = sorted(tag for tag in steps_of if tag not in present
                         and _expected_at(tag, step, present, first_step))
        if missing:
            beside = sorted(present & set(EPISODE_TAGS)) if set(missing) & set(EPISODE_TAGS) else []
            why = (f" and {', '.join(beside)} (the trainer writes the episode tags together)" if beside
                   else "")
            lines.append(f"has no {_tags(missing)} at step {step}, where it logs {STEP_TAG}{why}")
    return _elsewhere(lines, "gaps")


def tag_problems(series: dict[str, list[Scalar]]) -> list[str]:
    """What in one event file's tags breaks the trainer's rule (tails of lines naming the file)."""
    logged = sorted({s.step for s in series.get(STEP_TAG, [])})
    problems = _duplicates(series)
    if logged:
        problems += _off_steps(series, set(logged)) + _gaps(series, logged)
    return problems


def learner_start_problems(series: dict[str, list[Scalar]], first_log: int | None, why: str) -> list[str]:
    """The learner's tags of a run's first sitting held to the log point at which its recorded
    config makes the trainer write them first (`first_log`, sacscale.evidence.learner_start;
    `why` says how): none before it, and from it on at every logged step, whichever of them the
    file logs (one it never logs is not held here, as in tag_problems). A
    forger who deletes them at early steps moves where the events show the learner starting,
    and with it which episode values the copy check leaves to the seed."""
    logged = sorted({s.step for s in series.get(STEP_TAG, [])})
    if first_log is None or not logged:
        return []
    held = [tag for tag in LEARNER_TAGS if series.get(tag)]
    early = sorted(tag for tag in held if any(s.step < first_log for s in series.get(tag, [])))
    if early:
        step = min(s.step for tag in early for s in series[tag] if s.step < first_log)
        return [f"logs {_tags(early)} at step {step}, before the learner's first update ({why})"]
    due = [step for step in logged if step >= first_log]
    lines = [f"has no {_tags(missing)} at step {step}, where the learner had updated ({why})" for step in due
             if (missing := [tag for tag in held if step not in {s.step for s in series.get(tag, [])}])]
    return _elsewhere(lines, "gaps")
