"""The correctness probe's record against its own numbers.

correctness.json is hashed with the rest of the set, but a record rewritten with its
manifest would still say what the page shows. Its verdicts are derived from its numbers
(sacscale.parallel.probe): each comparison passes when the difference it judges (`rel_diff`;
`max_rel_diff` in records made before the normwise criterion) is finite and within the
code's tolerance for it (sacscale.evidence.probe_code_settings, which also holds the
record's own tolerances to the code's), and that difference is the one its criterion
names; the ranks' agreement flags
follow from the spreads recorded beside them; the probe passes when every comparison and
every agreement does. A verdict its numbers do not give is a problem.
"""

from __future__ import annotations

import math
from pathlib import Path

from sacscale.number_kinds import is_number
from sacscale.evidence.probe_code_settings import code_settings_problems, expected_tolerance
from sacscale.evidence.probe_measures import measure_problems
from sacscale.evidence.probe_plan import probe_plan_problems
from sacscale.evidence.probe_trainer_path import check_flag_problems, spreads_zero
from sacscale.evidence.result import EvidenceStructureError, load_json
from sacscale.parallel.probe_tensors import relative

NAME = "correctness.json"
AGREEMENT = ("ranks_started_apart", "initial_weights_identical", "ranks_identical_after")


# the numbers a comparison records (since the normwise criterion, also the one it judges)
FIELDS = ("max_abs_diff", "scale", "max_rel_diff")


def comparison_problems(where: str, c: dict, code_tolerance) -> list[str]:
    """A comparison's verdict from its numbers, judged against the code's tolerance for it
    (`code_tolerance`; "?" where the code gives none: then the record's). Whether its own
    tolerance is the code's is sacscale.evidence.probe_code_settings's to say."""
    judged = c.get("rel_diff", c.get("max_rel_diff"))
    tolerance = c.get("tolerance") if code_tolerance == "?" else code_tolerance
    if "rel_diff" in c and c.get("criterion") not in ("max", "norm"):
        return [f"{where}: criterion {str(c.get('criterion'))[:20]!r}, neither 'max' nor 'norm'"]
    fields = FIELDS + (("rel_diff",) if "rel_diff" in c else ()) + (("norm_rel_diff",) if c.get("criterion") == "norm"
                                                                     else ())
    recorded = c.get("tolerance")
    if not all(is_number(c.get(f)) for f in fields) or not (recorded is None or is_number(recorded)):
        return [f"{where}: {', '.join(fields)} must be numbers and its tolerance a number or null"]
    problems = []
    named = c["norm_rel_diff"] if c.get("criterion") == "norm" else c["max_rel_diff"]
    if named != judged:
        problems.append(f"{where}: judges {judged!r}, but its criterion {c.get('criterion', 'max')!r} names "
                        f"{named!r}")
    if not math.isclose(relative(c["max_abs_diff"], c["scale"]), c["max_rel_diff"], rel_tol=1e-9):
        problems.append(f"{where}: max_rel_diff {c['max_rel_diff']!r} is not max_abs_diff / scale")
    passes = math.isfinite(judged) and (tolerance is None or judged <= tolerance)
    if c.get("pass") is not passes:
        problems.append(f"{where}: pass {c.get('pass')!r}, but {judged:g} against a tolerance of {tolerance!r} "
                        f"{'passes' if passes else 'fails'}")
    return problems


def agreement_problems(record: dict) -> list[str]:
    """The agreement flags the recorded spreads give."""
    problems = []
    after = spreads_zero(record, "rank_spread_max_abs")
    if "ranks_identical_after" in record and after is not None and record["ranks_identical_after"] is not after:
        problems.append(f"ranks_identical_after {record['ranks_identical_after']!r}, but rank_spread_max_abs "
                        f"says {after}")
    before = spreads_zero(record, "rank_spread_before_broadcast_max_abs")
    if "ranks_started_apart" in record and before is not None and record.get("world_size") != 1 \
            and record["ranks_started_apart"] is before:
        problems.append(f"ranks_started_apart {record['ranks_started_apart']!r}, but "
                        f"rank_spread_before_broadcast_max_abs says {not before}")
    return problems


def _comparisons(record: dict):
    """The record's comparisons, or None where they are not a list of objects."""
    comparisons = record.get("comparisons") or []
    ok = isinstance(comparisons, list) and all(isinstance(c, dict) for c in comparisons)
    return comparisons if ok else None


def _comparison_problems(record: dict, comparisons: list) -> list[str]:
    problems = []
    for i, c in enumerate(comparisons):
        problems += comparison_problems(f"comparison {i + 1} ({str(c.get('tensor'))[:40]})", c,
                                        expected_tolerance(record, c.get("tensor"))[0])
    return problems


def _all_passed(comparisons: list) -> bool:
    """Every comparison passed, and there was one: a probe that compared nothing tested nothing."""
    return bool(comparisons) and all(c.get("pass") is True for c in comparisons)


def _json_type(value) -> str:
    names = {list: "list", str: "string", bool: "boolean", int: "number", float: "number", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def trainer_problems(trainer) -> list[str]:
    """The trainer path's record against its own numbers (sacscale.evidence.probe_trainer_path)."""
    if not isinstance(trainer, dict):
        return [f"a JSON {_json_type(trainer)}, where the trainer path's record (an object) goes"]
    if not isinstance(trainer.get("pass"), bool):
        return ["not a trainer-path record (no true or false pass)"]
    comparisons = _comparisons(trainer)
    if comparisons is None:
        return ["comparisons: not a list of comparisons"]
    return _comparison_problems(trainer, comparisons) + check_flag_problems(trainer, comparisons)


def probe_problems(record) -> list[str]:
    if not isinstance(record, dict) or not isinstance(record.get("pass"), bool):
        return ["not a probe record (no true or false pass)"]
    comparisons = _comparisons(record)
    if comparisons is None:
        return ["comparisons: not a list of comparisons"]
    problems = _comparison_problems(record, comparisons)
    try:
        problems += agreement_problems(record)
    except ValueError as exc:
        problems.append(str(exc))
    agreed = [record[k] for k in AGREEMENT if k in record]
    passes = _all_passed(comparisons) and all(a is True for a in agreed)
    trainer = record.get("trainer_path")
    if trainer is not None:
        if not isinstance(trainer, dict):
            return problems  # its shape is named on its own (check_probe_record); no verdict to hold `pass` to
        problems += [f"trainer_path: {p}" for p in trainer_problems(trainer)]
    if record["pass"] is not (passes and (trainer is None or trainer.get("pass") is True)):
        problems.append(f"pass {record['pass']!r}, but its comparisons and agreement flags give {passes}"
                        + ("" if comparisons else " (it compared nothing)")
                        + ("" if trainer is None else f" and its trainer_path.pass is {trainer.get('pass')!r}"))
    return problems


def check_probe_record(root: Path) -> list[str]:
    """Problems of the set's correctness.json, each naming it (none without one): its
    verdicts against its numbers, its settings against the code's and plan.json's `probe`, its
    measurements against the code's names and formulas (sacscale.evidence.probe_measures)."""
    if not (root / NAME).is_file():
        return []
    try:
        record = load_json(root, NAME)
        plan = load_json(root, "plan.json") if (root / "plan.json").is_file() else {}
    except EvidenceStructureError as exc:
        return [str(exc)]
    trainer = record.get("trainer_path") if isinstance(record, dict) else None
    problems = [] if trainer is None or isinstance(trainer, dict) else \
        [f"{NAME}: trainer_path: {p}" for p in trainer_problems(trainer)]
    problems += [f"{NAME}: {p}: its verdicts are not the ones its numbers give" for p in probe_problems(record)]
    problems += [f"{NAME}: {p}" for p in code_settings_problems(record) + measure_problems(record)]
    probe = plan.get("probe") if isinstance(plan, dict) else None
    if isinstance(probe, dict) and isinstance(record, dict):
        problems += [f"{NAME}: {p}" for p in probe_plan_problems(probe, record)]
    return problems
