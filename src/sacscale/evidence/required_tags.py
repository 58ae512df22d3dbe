"""The tags a rank's event file must hold at all, by what the run records (sacscale.evidence.
logged_tags holds only the tags a file logs, so a tag removed from every step is seen here):

- the episode tags, in a sitting whose envs cannot all have gone without an ended episode: the
  trainer writes them at each log point whose interval ended one (sacscale.train.logs), and
  every env's time-out counter is drawn at the sitting's start uniformly over the task's
  episode length (sacscale.task.g1_walk_flat), so an env runs K steps without a time-out with
  chance 1 - K / length at most (a fall only ends an episode sooner), and none of a rank's
  num_envs envs ends one with chance (1 - K / length) ** num_envs; below EPISODE_CHANCE the tags
  are required (2048 envs: from iteration 11 on; 16 envs: from iteration 727);
- the phase times (`Time/*`), in a sitting the record says was traced (`config.trace`; a
  resumed sitting's own `sittings[].config.trace`, the first sitting of a resumed run records
  none): the trainer writes each at every log point of a traced sitting.

A set made by this code is held to this trainer's tag list; an older set to the tags every
trainer version wrote (`Episode/fall_rate` and the pool's two phase times came later)."""

from __future__ import annotations

from sacscale.analysis.events import Scalar
from sacscale.evidence.log_cadence import recorded_sittings
from sacscale.evidence.logged_tags import EPISODE_TAGS, STEP_TAG
from sacscale.task.walk_rules import TaskConfig
from sacscale.train.log_tags import COLLECTOR_PHASES, LEARNER_PHASES

EPISODE_CHANCE = 1e-9
EPISODE_LENGTH = TaskConfig().episode_length  # the trainer's task takes no other
OLDER_EPISODE_TAGS = ("Episode/return", "Episode/length")
PHASE_TAGS = tuple(f"Time/collector_{p}" for p in COLLECTOR_PHASES) + tuple(f"Time/{p}" for p in LEARNER_PHASES)
OLDER_PHASE_TAGS = tuple(tag for tag in PHASE_TAGS if "physics" not in tag)


def _int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def no_episode_chance(steps: int, num_envs: int) -> float:
    """The chance that none of a rank's envs ended an episode in its first `steps` steps."""
    return (1 - min(steps, EPISODE_LENGTH) / EPISODE_LENGTH) ** num_envs


def _missing(series: dict[str, list[Scalar]], required: tuple[str, ...]) -> list[str]:
    return [tag for tag in required if not series.get(tag)]


def _episode_problem(series: dict[str, list[Scalar]], start: int, num_envs, strict: bool) -> str | None:
    logged = [s.step for s in series.get(STEP_TAG, [])]
    if not (_int(num_envs) and num_envs > 0 and logged):
        return None
    steps = max(logged) - start
    chance = no_episode_chance(steps, num_envs)
    missing = _missing(series, EPISODE_TAGS if strict else OLDER_EPISODE_TAGS)
    if not missing or chance >= EPISODE_CHANCE:
        return None
    return (f"logs no {', '.join(missing)} at any step, though its {num_envs} envs stepped {steps} times each "
            f"(iterations {start + 1}..{max(logged)}): the trainer writes the episode tags at each log point whose "
            f"interval ended an episode, and with time-outs drawn over the task's {EPISODE_LENGTH}-step episode "
            f"none ends with chance {_chance(chance)} (below {EPISODE_CHANCE:.0e}): the episode tags were removed")


def _chance(value: float) -> str:
    return f"{value:.1e}" if value > 0 else "under 1e-300"


def _phase_problem(series: dict[str, list[Scalar]], traced: tuple[str, object], strict: bool) -> str | None:
    source, trace = traced
    missing = _missing(series, PHASE_TAGS if strict else OLDER_PHASE_TAGS)
    if trace is not True or not missing or not series.get(STEP_TAG):
        return None
    shown = ", ".join(missing[:3]) + (f" and {len(missing) - 3} more" if len(missing) > 3 else "")
    return (f"logs no {shown} at any step, though the sitting was traced ({source} true): the trainer writes "
            "every phase time at each log point of a traced sitting")


def _traces(meta: dict, count: int) -> list[tuple[str, object]]:
    """(where, trace) of each sitting as recorded; the first sitting of a resumed run records none."""
    entries = meta.get("sittings") if isinstance(meta.get("sittings"), list) else []
    config = meta.get("config") if isinstance(meta.get("config"), dict) else {}
    if not entries:
        return [("train_meta.json config.trace", config.get("trace"))] * count
    out = [("", None)]
    for i, entry in enumerate(entries):
        own = entry.get("config") if isinstance(entry, dict) and isinstance(entry.get("config"), dict) else {}
        out.append((f"train_meta.json sittings[{i}].config.trace", own.get("trace")))
    return out


def _first_step(series: dict[str, list[Scalar]]) -> float:
    return min((s.step for s in series.get(STEP_TAG, [])), default=float("inf"))


def required_tag_problems(name: str, meta: dict, files: dict | None, strict: bool) -> list[str]:
    """Each rank's event files against the tags the record says they must hold (files:
    {rank: [(path, {tag: [Scalar]})]}, one file a sitting); the first rank that shows a problem
    is named."""
    sittings, problems = recorded_sittings(meta)
    if problems or not files:
        return []  # named by the sittings check
    config = meta.get("config") if isinstance(meta.get("config"), dict) else {}
    traces = _traces(meta, len(sittings))
    for rank, parts in sorted(files.items()):
        ordered = sorted((series for _, series in parts), key=_first_step)
        if len(ordered) != len(sittings) or len(traces) != len(sittings):
            return []  # named by the sittings check
        for k, series in enumerate(ordered):
            which = f"tb/rank{rank}" + (f" (sitting {k + 1} of {len(ordered)})" if len(ordered) > 1 else "")
            found = [p for p in (_episode_problem(series, sittings[k].from_iteration, config.get("num_envs"), strict),
                                 _phase_problem(series, traces[k], strict)) if p]
            if found:
                return [f"{name}: {which} {p}" for p in found]
    return []
