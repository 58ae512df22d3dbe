"""An evaluation record's stand-still reference and its ratios, derived: each command's
`baseline_stand_still` scores are what a robot standing still scores on the record's
protocol (sacscale.eval.stand_still; its `overall` is those pooled, eval_record), every
`per_command` entry names its command of `protocol.commands`, and `ratio_to_stand_still`
(overall and per command) is the rms errors over the stand-still ones (sacscale.eval.pooling
.ratios, the function evaluate writes them with). Fields an older record lacks are not
compared."""

from __future__ import annotations

from sacscale.eval.pooling import ratios
from sacscale.eval.stand_still import stand_still_per_command
from sacscale.evidence.result import deep_differences

_NOT_SCORES = (TypeError, KeyError, AttributeError, ValueError)


def _as_recorded(expected, stored):
    """`expected` cut to the keys `stored` holds (an older record holds fewer)."""
    if isinstance(expected, dict) and isinstance(stored, dict):
        return {k: _as_recorded(v, stored[k]) for k, v in expected.items() if k in stored}
    return expected


def _differences(rel: str, stored, expected, where: str, source: str) -> list[str]:
    problems, _ = deep_differences(stored, _as_recorded(expected, stored), where)
    return [f"{rel}: {p.replace('recomputed', source)}" for p in problems]


def _dict(value) -> dict | None:
    return value if isinstance(value, dict) else None


def baseline_problems(rel: str, ev: dict) -> list[str]:
    """baseline_stand_still.per_command against the protocol it ran."""
    protocol = _dict(ev.get("protocol")) or {}
    stored = _dict((_dict(ev.get("baseline_stand_still")) or {}).get("per_command"))
    if stored is None or not isinstance(protocol.get("commands"), dict):
        return []
    counts = [protocol.get(k) for k in ("envs_per_command", "steps", "settle_steps")]
    if not all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in counts):
        return [f"{rel}: protocol envs_per_command, steps and settle_steps {str(counts)[:60]}: not the counts evaluate "
                f"records, so baseline_stand_still cannot be derived from them"]
    try:
        expected = stand_still_per_command(protocol["commands"], protocol["envs_per_command"], protocol["steps"],
                                           protocol["settle_steps"])
    except _NOT_SCORES:
        return [f"{rel}: protocol commands, envs_per_command, steps and settle_steps are not what evaluate records, "
                f"so baseline_stand_still cannot be derived from them"]
    return _differences(rel, stored, expected, "baseline_stand_still.per_command",
                        "a robot standing still on protocol.commands gives")


def command_problems(rel: str, ev: dict) -> list[str]:
    """Each per_command entry scores the command of protocol.commands it is named after."""
    commands = _dict((_dict(ev.get("protocol")) or {}).get("commands")) or {}
    per_command = _dict(ev.get("per_command")) or {}
    return [f"{rel}: per_command.{name}.command {str(scores.get('command'))[:40]}, protocol.commands.{name} is "
            f"{str(commands[name])[:40]}" for name, scores in per_command.items()
            if isinstance(scores, dict) and name in commands and "command" in scores
            and scores["command"] != commands[name]]


def ratio_problems(rel: str, ev: dict) -> list[str]:
    """ratio_to_stand_still, overall and per command, from the rms errors beside it."""
    baseline = _dict(ev.get("baseline_stand_still")) or {}
    still = _dict(baseline.get("per_command")) or {}
    # (where the ratios are, the policy's scores, the stand-still robot's, the stored ratios)
    found = [("", "overall", ev.get("overall"), baseline.get("overall"), ev.get("ratio_to_stand_still"))]
    found += [(f"per_command.{name}.", f"per_command.{name}", scores, still.get(name),
               scores.get("ratio_to_stand_still"))
              for name, scores in (_dict(ev.get("per_command")) or {}).items() if isinstance(scores, dict)]
    problems = []
    for prefix, scored, policy, reference, stored in found:
        if stored is None:
            continue
        try:
            expected = ratios(policy, reference)
        except _NOT_SCORES:
            problems.append(f"{rel}: {prefix}ratio_to_stand_still: {scored}.rms_error or the stand-still one is not "
                            f"what evaluate records, so the ratios cannot be derived")
            continue
        problems += _differences(rel, stored, expected, f"{prefix}ratio_to_stand_still",
                                 f"{scored}.rms_error over the stand-still one gives")
    return problems


def stand_still_problems(rel: str, ev: dict) -> list[str]:
    return baseline_problems(rel, ev) + command_problems(rel, ev) + ratio_problems(rel, ev)
