"""The iterations at which a run's events hold scalars, derived from its log interval: the
trainer logs at every multiple of `log_every` and at the last iteration
(sacscale.train.rank), so a `log_every` edited alike in the plan and every record (10 -> 5)
while the hashed events still log every 10 iterations is named here. A resumed run is
judged from its last sitting's start on, under that sitting's configuration (a resume may
change log_every)."""

from __future__ import annotations

from collections import Counter

# a scalar every interval's log writes, on every rank
LOGGED_EVERY_INTERVAL = "Perf/rank_env_steps"


def _int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _sitting_start(meta: dict) -> int:
    """The iteration the last sitting started after (0 for a run never resumed)."""
    sittings = meta.get("sittings")
    last = sittings[-1] if isinstance(sittings, list) and sittings and isinstance(sittings[-1], dict) else {}
    start = last.get("from_iteration", 0)
    return start if _int(start) and start >= 0 else 0


def _expected_steps(every: int, start: int, last_logged: int, iterations) -> list[int]:
    """The iterations after `start`, up to the last one logged, at which the trainer logs."""
    steps = list(range((start // every + 1) * every, last_logged + 1, every))
    if _int(iterations) and start < iterations <= last_logged and iterations not in steps:
        steps.append(iterations)
    return steps


def _seen_interval(steps: list[int]) -> str:
    gaps = Counter(b - a for a, b in zip(steps, steps[1:]))
    return f"every {gaps.most_common(1)[0][0]} iterations" if gaps else f"only at iteration {steps[0]}"


def cadence_problems(name: str, meta: dict, by_rank_events: dict | None) -> list[str]:
    """Each rank's logged iterations against train_meta.json config.log_every (which the
    command and the plan are held to elsewhere)."""
    config = meta.get("config") if isinstance(meta.get("config"), dict) else {}
    every, iterations = config.get("log_every"), config.get("iterations")
    if not (_int(every) and every > 0) or not by_rank_events:
        return []
    start = _sitting_start(meta)
    for rank, series in by_rank_events.items():
        steps = sorted({s.step for s in series.get(LOGGED_EVERY_INTERVAL, []) if s.step > start})
        if not steps:
            continue
        expected = _expected_steps(every, start, steps[-1], iterations)
        if steps != expected:
            shown = ", ".join(str(s) for s in steps[:4]) + (", ..." if len(steps) > 4 else "")
            return [f"{name}: tb/rank{rank} events log {LOGGED_EVERY_INTERVAL} {_seen_interval(steps)} "
                    f"(at {shown}), but the run's log_every is {every} (train_meta.json config, the "
                    f"command's --log-every and the plan's): another run's events, or log_every edited"]
    return []
