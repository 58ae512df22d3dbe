"""The correctness probe's measurements against what the code says they are
(sacscale.parallel.probe, whose names and formulas are in sacscale.parallel.probe_tensors
and sacscale.learn.state_names, without torch):

- the comparisons are the code's list for the record's mode, each once (a record made
  before the sync was judged has no sync/ ones; a trainer path that never updated, none);
- a zero difference has a zero norm and a non-zero one a non-zero norm; log-alpha and its
  bucket are one number, so their normwise difference is their elementwise one; a bucket's
  gradient (grad/) and its sync (sync/) are scaled by the largest entry of nearly the same
  gradient (the reference's and the ranks' mean), apart by no more than their differences;
- the spreads name the learner's state tensors; before the broadcast only the networks
  differ (a rank's seed draws only their weights) and the target critic is the critic's
  copy; one rank does not differ from itself;
- `initial_weights_identical` is what the rest gives: false where the start-up broadcast
  was broken on purpose over ranks that started apart, true where the ranks ended identical
  and every judged parameter matched the reference's (ranks that start apart, or from other
  weights than the reference's, do not end so); `seconds` is a duration.
"""

from __future__ import annotations

import math
from collections import Counter

from sacscale.number_kinds import is_finite_number
from sacscale.evidence.probe_code_settings import made_before_sync_judged
from sacscale.learn.state_names import COPIES, ONE_NUMBER, SEEDED_STATE, state_tensor_names
from sacscale.parallel.probe_tensors import compared_tensors

SPREADS = ("rank_spread_before_broadcast_max_abs", "rank_spread_max_abs")
CODE_LIST = "sacscale.parallel.probe_tensors.compared_tensors"


def _obs_norm(record: dict) -> bool:
    overrides = record.get("learner_overrides")
    return isinstance(overrides, dict) and bool(overrides.get("obs_norm"))


def _comparisons(record: dict) -> list[dict]:
    comparisons = record.get("comparisons")
    return [c for c in comparisons if isinstance(c, dict)] if isinstance(comparisons, list) else []


def expected_tensors(record: dict, learner: bool) -> tuple[str, ...] | None:
    """The code's list of comparisons for this record, or None where it cannot say (a trainer
    path without an update count)."""
    if learner:
        return compared_tensors("learner", _obs_norm(record), sync=not made_before_sync_judged(record))
    updates = record.get("learner_updates_per_rank")
    if not isinstance(updates, int) or isinstance(updates, bool):
        return None
    return compared_tensors("trainer") if updates > 0 else ()


def tensor_name_problems(record: dict, learner: bool) -> list[str]:
    expected = expected_tensors(record, learner)
    if expected is None:
        return []
    named = Counter(str(c.get("tensor"))[:40] for c in _comparisons(record))
    problems = [f"comparisons: {name} {count} times (the probe compares each once)"
                for name, count in named.items() if count > 1]
    unknown = [name for name in named if name not in expected]
    if unknown:
        problems.append(f"comparisons: {', '.join(unknown)}: not among the tensors the probe compares ({CODE_LIST})")
    missing = [name for name in expected if name not in named]
    if missing:
        problems.append(f"comparisons: no {', '.join(missing)} (the probe compares {len(expected)}: {CODE_LIST})")
    return problems


def _one_comparison_problems(where: str, c: dict) -> list[str]:
    abs_diff, norm_rel, max_rel = c.get("max_abs_diff"), c.get("norm_rel_diff"), c.get("max_rel_diff")
    if not all(is_finite_number(v) for v in (abs_diff, norm_rel, max_rel)):
        return []
    if (abs_diff == 0) is not (norm_rel == 0):
        return [f"{where}: max_abs_diff {abs_diff!r}, norm_rel_diff {norm_rel!r}: a difference is zero exactly "
                "where its 2-norm is"]
    key = str(c.get("tensor")).split("/", 1)[-1]
    if key in ONE_NUMBER and not math.isclose(norm_rel, max_rel, rel_tol=1e-9):
        return [f"{where}: norm_rel_diff {norm_rel!r}, max_rel_diff {max_rel!r}: {key} is one number, whose 2-norm "
                "is its largest entry"]
    return []


def _scale_problems(by_name: dict[str, tuple[int, dict]]) -> list[str]:
    """grad/<bucket> and sync/<bucket>: |max|reference| - max|ranks' mean|| <= max|reference -
    synced| + max|synced - ranks' mean| (rank 0's synced gradient between them)."""
    problems = []
    for name, (i, grad) in by_name.items():
        if not name.startswith("grad/") or "sync/" + name[5:] not in by_name:
            continue
        j, sync = by_name["sync/" + name[5:]]
        numbers = [grad.get("scale"), sync.get("scale"), grad.get("max_abs_diff"), sync.get("max_abs_diff")]
        if not all(is_finite_number(v) for v in numbers):
            continue
        apart, allowed = abs(numbers[0] - numbers[1]), numbers[2] + numbers[3]
        if apart > allowed + 1e-9 * max(numbers[0], numbers[1]):
            problems.append(f"comparisons {i} ({name}) and {j} (sync/{name[5:]}): scales {numbers[0]!r} and "
                            f"{numbers[1]!r} differ by {apart:.3g}, more than their max_abs_diffs allow "
                            f"({allowed:.3g}): both are the largest entry of the bucket's gradient, the "
                            "reference's and the ranks' mean")
    return problems


def number_problems(record: dict) -> list[str]:
    """A comparison's numbers against the formulas that relate them (the ratio itself,
    max_rel_diff = max_abs_diff / scale, is sacscale.evidence.probe_record's)."""
    problems, by_name = [], {}
    for i, c in enumerate(_comparisons(record), start=1):
        name = str(c.get("tensor"))[:40]
        problems += _one_comparison_problems(f"comparison {i} ({name})", c)
        by_name.setdefault(name, (i, c))
    return problems + _scale_problems(by_name)


def _spreads(record: dict, key: str) -> dict | None:
    spreads = record.get(key)
    ok = isinstance(spreads, dict) and spreads and all(is_finite_number(v) for v in spreads.values())
    return spreads if ok else None


def spread_problems(record: dict) -> list[str]:
    problems = []
    names = state_tensor_names(_obs_norm(record))
    for key in SPREADS:
        spreads = _spreads(record, key)
        if spreads is None:
            continue
        if sorted(spreads) != sorted(names):
            problems.append(f"{key}: names {', '.join(sorted(spreads))[:120]}, the learner's state tensors are "
                            f"{', '.join(names)}")
        if record.get("world_size") == 1:
            problems += [f"{key}.{name} {value!r} over one rank: a rank does not differ from itself"
                         for name, value in spreads.items() if value != 0]
    before = _spreads(record, SPREADS[0])
    if before is not None and record.get("world_size") != 1:
        problems += [f"{SPREADS[0]}.{name} {value!r}: every rank starts it from the same value (a rank's seed "
                     "draws only the networks' weights)" for name, value in before.items()
                     if name not in SEEDED_STATE and value != 0]
        problems += [f"{SPREADS[0]}.{copy} {before[copy]!r} is not {original}'s {before[original]!r}: the "
                     f"{copy} starts as a copy of the {original}" for copy, original in COPIES.items()
                     if copy in before and original in before and before[copy] != before[original]]
    return problems


def _params_matched(record: dict) -> bool:
    """Every judged parameter comparison passed, and there was one."""
    judged = [c for c in _comparisons(record) if str(c.get("tensor")).startswith("param/")
              and c.get("tolerance") is not None]
    return bool(judged) and all(c.get("pass") is True for c in judged)


def initial_weights_problems(record: dict) -> list[str]:
    given = record.get("initial_weights_identical")
    if "initial_weights_identical" not in record:
        return []
    if not isinstance(given, bool):
        return [f"initial_weights_identical {str(given)[:20]!r}: not true or false"]
    ranks = record.get("world_size")
    if record.get("mutation") == "no_broadcast" and isinstance(ranks, int) and ranks > 1 \
            and record.get("ranks_started_apart") is True and given:
        return [f"initial_weights_identical True, but over {ranks} ranks that started apart the start-up "
                "broadcast was broken on purpose (mutation 'no_broadcast'): their weights still differ"]
    if not given and record.get("ranks_identical_after") is True and _params_matched(record):
        return ["initial_weights_identical False, but the ranks ended identical and every judged parameter "
                "matched the reference's: ranks that start apart, or from other weights than the reference's, "
                "do not end so"]
    return []


def seconds_problems(record: dict) -> list[str]:
    seconds = record.get("seconds")
    if "seconds" in record and not (is_finite_number(seconds) and seconds > 0):
        return [f"seconds {str(seconds)[:20]}: not a duration (a finite number of seconds above zero)"]
    return []


def measure_problems(record) -> list[str]:
    """correctness.json's measurements against the code (an object; its trainer path read the
    same way, its problems prefixed `trainer_path: `)."""
    if not isinstance(record, dict):
        return []
    problems = (tensor_name_problems(record, learner=True) + number_problems(record) + spread_problems(record)
                + initial_weights_problems(record) + seconds_problems(record))
    trainer = record.get("trainer_path")
    if isinstance(trainer, dict):
        problems += [f"trainer_path: {p}" for p in tensor_name_problems(trainer, learner=False)
                     + number_problems(trainer) + spread_problems(trainer)]
    return problems
