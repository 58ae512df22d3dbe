"""The correctness probe's record against its own numbers.

correctness.json is hashed with the rest of the set, but a record rewritten with its
manifest would still say what the page shows. Its verdicts are derived from its numbers
(sacscale.parallel.probe): each comparison passes when the difference it judges (`rel_diff`;
`max_rel_diff` in records made before the normwise criterion) is finite and within its
tolerance, and that difference is the one its criterion names; the ranks' agreement flags
follow from the spreads recorded beside them; the probe passes when every comparison and
every agreement does. A verdict its numbers do not give is a problem.
"""

from __future__ import annotations

import math
from pathlib import Path

from sacscale.evidence.result import EvidenceStructureError, load_json

NAME = "correctness.json"
AGREEMENT = ("ranks_started_apart", "initial_weights_identical", "ranks_identical_after")


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def comparison_problems(where: str, c: dict, tolerances: set) -> list[str]:
    judged = c.get("rel_diff", c.get("max_rel_diff"))
    tolerance = c.get("tolerance")
    if not _number(judged) or not (tolerance is None or _number(tolerance)):
        return [f"{where}: its difference {judged!r} or tolerance {tolerance!r} is not a number"]
    problems = []
    named = c.get("norm_rel_diff") if c.get("criterion") == "norm" else c.get("max_rel_diff")
    if named is not None and named != judged:
        problems.append(f"{where}: judges {judged!r}, but its criterion {c.get('criterion', 'max')!r} names "
                        f"{named!r}")
    if _number(c.get("max_abs_diff")) and _number(c.get("scale")) and _number(c.get("max_rel_diff")) and \
            not math.isclose(c["max_abs_diff"] / max(c["scale"], 1e-30), c["max_rel_diff"], rel_tol=1e-9):
        problems.append(f"{where}: max_rel_diff {c['max_rel_diff']!r} is not max_abs_diff / scale")
    if tolerance not in tolerances:
        problems.append(f"{where}: tolerance {tolerance!r} is none of the record's tolerances")
    passes = math.isfinite(judged) and (tolerance is None or judged <= tolerance)
    if c.get("pass") is not passes:
        problems.append(f"{where}: pass {c.get('pass')!r}, but {judged:g} against a tolerance of {tolerance!r} "
                        f"{'passes' if passes else 'fails'}")
    return problems


def _spreads_zero(record: dict, key: str) -> bool | None:
    spreads = record.get(key)
    if not isinstance(spreads, dict) or not all(_number(v) for v in spreads.values()):
        return None
    return all(v == 0 for v in spreads.values())


def agreement_problems(record: dict) -> list[str]:
    """The agreement flags the recorded spreads give."""
    problems = []
    after = _spreads_zero(record, "rank_spread_max_abs")
    if "ranks_identical_after" in record and after is not None and record["ranks_identical_after"] is not after:
        problems.append(f"ranks_identical_after {record['ranks_identical_after']!r}, but rank_spread_max_abs "
                        f"says {after}")
    before = _spreads_zero(record, "rank_spread_before_broadcast_max_abs")
    if "ranks_started_apart" in record and before is not None and record.get("world_size") != 1 \
            and record["ranks_started_apart"] is before:
        problems.append(f"ranks_started_apart {record['ranks_started_apart']!r}, but "
                        f"rank_spread_before_broadcast_max_abs says {not before}")
    return problems


def probe_problems(record) -> list[str]:
    if not isinstance(record, dict) or not isinstance(record.get("pass"), bool):
        return ["not a probe record (no true or false pass)"]
    comparisons = record.get("comparisons") or []
    if not isinstance(comparisons, list) or not all(isinstance(c, dict) for c in comparisons):
        return ["comparisons: not a list of comparisons"]
    tolerance = record.get("tolerance")
    given = list(tolerance.values()) if isinstance(tolerance, dict) else [tolerance]
    tolerances = {None} | {t for t in [*given, record.get("sync_tolerance")] if _number(t)}
    problems = []
    for i, c in enumerate(comparisons):
        problems += comparison_problems(f"comparison {i + 1} ({str(c.get('tensor'))[:40]})", c, tolerances)
    problems += agreement_problems(record)
    agreed = [record[k] for k in AGREEMENT if k in record]
    passes = all(c.get("pass") is True for c in comparisons) and all(a is True for a in agreed)
    if record["pass"] is not passes:
        problems.append(f"pass {record['pass']!r}, but its comparisons and agreement flags give {passes}")
    return problems


def check_probe_record(root: Path) -> list[str]:
    """Problems of the set's correctness.json, each naming it (none without one)."""
    if not (root / NAME).is_file():
        return []
    try:
        record = load_json(root, NAME)
    except EvidenceStructureError as exc:
        return [str(exc)]
    return [f"{NAME}: {p}: its verdicts are not the ones its numbers give" for p in probe_problems(record)]
