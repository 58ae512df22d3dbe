"""The correctness probe's trainer path (correctness.json `trainer_path`, written by
sacscale.train.probe) against its own numbers: each sync comparison against the record's
`sync_tolerance`, each check flag that a recorded number gives (`sync_within_tolerance`
from the comparisons, `ranks_bit_identical_after` and `ranks_started_apart` from the
spreads, `learner_updated` from the update count), and `pass` the AND of the checks."""

from __future__ import annotations

CHECKS = ("hooks_installed_by_trainer", "learner_updated", "broadcast_by_trainer", "ranks_started_apart",
          "ranks_bit_identical_after", "sync_within_tolerance")


def spreads_zero(record: dict, key: str) -> bool | None:
    """Whether every spread under `key` is zero; None where the record has none (an older one,
    or the trainer measured none)."""
    spreads = record.get(key)
    if spreads is None:
        return None
    if not isinstance(spreads, dict) or not spreads \
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in spreads.values()):
        raise ValueError(f"{key}: not an object of numbers (one per network)")
    return all(v == 0 for v in spreads.values())


def _spread_flag(record: dict, key: str, zero: bool) -> bool | None:
    """Whether every spread under `key` is zero (`zero`) or one is not; False where the
    trainer measured none (null), None where the record does not have the key."""
    if key not in record:
        return None
    all_zero = spreads_zero(record, key)
    if all_zero is None:
        return False
    return all_zero if zero else not all_zero


def derived_checks(record: dict, comparisons: list) -> dict[str, bool | None]:
    """The check flags the record's numbers give (None: not recorded)."""
    updates = record.get("learner_updates_per_rank")
    apart = _spread_flag(record, "rank_spread_before_broadcast_max_abs", zero=False)
    return {
        "sync_within_tolerance": bool(comparisons) and all(c.get("pass") is True for c in comparisons),
        "ranks_bit_identical_after": _spread_flag(record, "rank_spread_max_abs", zero=True),
        "ranks_started_apart": True if record.get("world_size") == 1 else apart,
        "learner_updated": updates > 0 if isinstance(updates, int) and not isinstance(updates, bool) else None,
    }


def check_flag_problems(record: dict, comparisons: list) -> list[str]:
    checks = record.get("checks")
    if not isinstance(checks, dict) or not checks or not all(isinstance(v, bool) for v in checks.values()):
        return ["checks: not an object of true or false flags"]
    try:
        derived = derived_checks(record, comparisons)
    except ValueError as exc:
        return [str(exc)]
    problems = [f"checks.{key} {checks[key]!r}, but its numbers give {value}"
                for key, value in derived.items() if key in checks and value is not None and checks[key] is not value]
    missing = [key for key in CHECKS if key not in checks]
    if missing:
        problems.append(f"checks: no {', '.join(missing)} (the probe command writes every one)")
    passes = all(checks.values()) and not missing
    if record.get("pass") is not passes:
        problems.append(f"pass {record.get('pass')!r}, but its checks give {passes}")
    return problems
