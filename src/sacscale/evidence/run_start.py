"""How early a run's start may be recorded: lower bounds on run.json `start_time` (and so
`duration_s`, the page's wall seconds) from the first things the run itself recorded
(binding keeps both after the start; run_end bounds the end).

- The wrapper takes `start_time` just before it starts the trainer's process; the trainer
  records its own `start_time` in train_meta.json once Python has started, imported its
  modules (torch, MuJoCo) and planned the job. No timeout bounds these steps, so the grace
  is a measured figure with room: every committed run took 1.0 to 5.7 s (the reference
  trainer 1.0 to 1.6 s); TRAINER_START_S, ten times the slowest, leaves room for a cold
  file cache or a loaded machine.
- The run's first event file is created (its first record written) when the trainer opens
  its event writer, after its setup: the learner, the ranks and their process group, the
  collectors' worker processes and their environments (the reference trainer: its own
  setup). Every committed run took 6.1 to 17.6 s from the wrapper's start (the reference
  trainer 16 to 46 s); FIRST_EVENT_S, over six times the slowest, bounds the start where
  train_meta.json's start was moved with it."""

from __future__ import annotations

from sacscale.number_kinds import is_finite_number

TRAINER_START_S = 60.0
FIRST_EVENT_S = 300.0


def start_problems(name: str, run: dict, meta: dict, first_event: float | None) -> list[str]:
    """run.json's start against the trainer's own and the run's first event (`first_event`:
    the earliest first record of its event files, None: none read)."""
    start = run.get("start_time")
    if not is_finite_number(start):
        return []
    problems = []
    trainer = meta.get("start_time")
    if is_finite_number(trainer) and trainer - start > TRAINER_START_S:
        problems.append(f"{name}: run.json start_time {start:.3f} is {trainer - start:.1f} s before train_meta.json's "
                        f"start_time {trainer:.3f}, beyond the {TRAINER_START_S:g} s the trainer's start (its "
                        f"interpreter and imports) may take after the wrapper's")
    if first_event is not None and first_event - start > FIRST_EVENT_S:
        problems.append(f"{name}: run.json start_time {start:.3f} is {first_event - start:.1f} s before the run's "
                        f"first event ({first_event:.3f}, when its event file was created), beyond the "
                        f"{FIRST_EVENT_S:g} s the trainer's start and setup may take")
    return problems
