"""How late a completed run's end may be recorded: upper bounds on run.json `end_time` (and
so `duration_s`, the page's wall seconds) and train_meta.json `end_time`, from what the
code does after each moment and the timeouts it gives those steps (binding keeps both
ends from coming before the events and the trainer's window).

- run.json `end_time` is taken as soon as the trainer's process group has exited; the
  wrapper stops one still running at `timeout_s` and kills it GRACE_S later, so a run lasts
  at most `timeout_s` + GRACE_S.
- After writing train_meta.json `end_time` the trainer closes each rank's collector (a
  wait, SIGTERM and a reap of COLLECTOR_CLOSE_S each), stops its rank processes (SIGTERM
  and a reap of KILL_GRACE_S each) and exits, which the wrapper allows GRACE_S after a
  stop: at most AFTER_RECORD_S in all.
- Between its last logged event and that `end_time` our trainer saves its final checkpoint
  and exits no slower than after a stop, which saves one too (GRACE_S), and with several
  ranks makes two all-gathers (the state hashes and the fault counters), each within the
  process group's timeout (`config.timeout_s`) or the run fails.

Process teardown and a checkpoint's write have no timeout of their own: the wrapper's
grace is the code's own figure for them. The reference trainer's last steps are its own
(no figure here), so only its record's end is bounded."""

from __future__ import annotations

from sacscale.number_kinds import is_finite_number

# sacscale.pipeline.run_record.GRACE_S, sacscale.parallel.launch.KILL_GRACE_S and
# CollectorHandle.close's timeout_s (a test holds them to the code; importing the launcher
# would load torch into verify)
GRACE_S = 30.0
KILL_GRACE_S = 10.0
COLLECTOR_CLOSE_S = 10.0
AFTER_RECORD_S = 3 * COLLECTOR_CLOSE_S + 2 * KILL_GRACE_S + GRACE_S
ALL_GATHERS_AFTER_LAST_LOG = 2


def after_last_log_s(meta: dict) -> float | None:
    """The most our trainer's steps after its last logged event may take, or None where
    its record does not give the ranks and the process group's timeout."""
    ranks, config = meta.get("world_size"), meta.get("config")
    timeout = config.get("timeout_s") if isinstance(config, dict) else None
    if not (isinstance(ranks, int) and is_finite_number(timeout)):
        return None
    return GRACE_S + (ALL_GATHERS_AFTER_LAST_LOG * timeout if ranks > 1 else 0.0)


def _duration_problems(name: str, run: dict) -> list[str]:
    start, end, timeout = run.get("start_time"), run.get("end_time"), run.get("timeout_s")
    if not all(is_finite_number(v) for v in (start, end, timeout)) or end - start <= timeout + GRACE_S:
        return []
    return [f"{name}: run.json end_time {end:.3f} is {end - start:.1f} s after its start_time, beyond its "
            f"timeout_s {timeout:g} s and the wrapper's {GRACE_S:g} s grace, after which the wrapper kills a run"]


def _after_record_problems(name: str, run: dict, meta: dict) -> list[str]:
    end, recorded = run.get("end_time"), meta.get("end_time")
    if not (is_finite_number(end) and is_finite_number(recorded)) or end - recorded <= AFTER_RECORD_S:
        return []
    return [f"{name}: run.json end_time {end:.3f} is {end - recorded:.1f} s after train_meta.json's end_time "
            f"{recorded:.3f}, beyond the {AFTER_RECORD_S:g} s the trainer's steps after its record may take "
            f"(collectors closed, ranks stopped, exit: the code's timeouts)"]


def _after_last_log_problems(name: str, meta: dict, last_event: float | None) -> list[str]:
    recorded, bound = meta.get("end_time"), after_last_log_s(meta)
    if last_event is None or bound is None or not is_finite_number(recorded) or recorded - last_event <= bound:
        return []
    return [f"{name}: train_meta.json end_time {recorded:.3f} is {recorded - last_event:.1f} s after the run's "
            f"last event ({last_event:.3f}), beyond the {bound:g} s its final checkpoint and exit may take "
            f"(the wrapper's {GRACE_S:g} s grace; with several ranks, {ALL_GATHERS_AFTER_LAST_LOG} all-gathers "
            f"within config.timeout_s)"]


def end_problems(name: str, run: dict, meta: dict, last_event: float | None, reference: bool) -> list[str]:
    """A completed run's ends against these bounds; `last_event`: the latest wall time of
    its events (None: unread)."""
    if run.get("status") != "completed":
        return []  # named as not completed by the records check
    problems = _duration_problems(name, run)
    if meta.get("status") != "completed":
        return problems
    problems += _after_record_problems(name, run, meta)
    return problems if reference else problems + _after_last_log_problems(name, meta, last_event)
