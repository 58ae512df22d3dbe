"""An evaluation record (eval/*.json) against its own parts, as sacscale.eval.evaluate
writes it: `overall` (and the stand-still baseline's) is its per-command scores pooled
(sacscale.eval.pooling), every command of `protocol.commands` has `envs_per_command`
episodes and they make `num_envs`, and `protocol.actions` is how actions are drawn at
`protocol.noise_scale`. Each per_command entry against itself and the protocol:
sacscale.evidence.eval_entries. Fields an older record lacks are not compared."""

from __future__ import annotations

import math

from sacscale.eval.pooling import actions_label, pooled_overall
from sacscale.evidence.eval_entries import entry_problems
from sacscale.number_kinds import is_count
from sacscale.evidence.result import deep_differences, same_value


def _pooling_problems(rel: str, where: str, scores) -> list[str]:
    """scores[`overall`] against its `per_command` scores pooled."""
    if not isinstance(scores, dict) or not isinstance(scores.get("overall"), dict) \
            or not isinstance(scores.get("per_command"), dict):
        return []
    try:
        pooled = pooled_overall(scores["per_command"])
    except (TypeError, KeyError, AttributeError, ValueError, ZeroDivisionError):
        return [f"{rel}: {where}per_command: not the scores evaluate writes (numbers and counts per command), "
                f"so {where}overall cannot be derived from them"]
    stored = {k: v for k, v in scores["overall"].items() if k in pooled}  # others: not pooled fields
    problems, _ = deep_differences(stored, pooled, f"{where}overall")
    return [f"{rel}: {p.replace('recomputed', 'its per_command entries give')}" for p in problems]


def _protocol_problems(rel: str, ev: dict) -> list[str]:
    protocol = ev.get("protocol") if isinstance(ev.get("protocol"), dict) else {}
    per_command = ev.get("per_command") if isinstance(ev.get("per_command"), dict) else None
    problems = []
    envs, total = protocol.get("envs_per_command"), protocol.get("num_envs")
    commands = protocol.get("commands")
    if is_count(envs) and is_count(total) and isinstance(commands, dict) and envs * len(commands) != total:
        problems.append(f"{rel}: protocol.envs_per_command {envs} x {len(commands)} commands is "
                        f"{envs * len(commands)}, protocol.num_envs says {total}")
    if isinstance(commands, dict) and per_command is not None and list(per_command) != list(commands):
        problems.append(f"{rel}: per_command scores {len(per_command)} command(s), protocol.commands lists "
                        f"{len(commands)}: not the same commands in the same order")
    if is_count(envs) and per_command is not None:
        other = sorted({str(s.get("episodes"))[:20] for s in per_command.values()
                        if isinstance(s, dict) and not same_value(s.get("episodes"), envs)})
        if other:
            problems.append(f"{rel}: per_command episodes {', '.join(other)}, where protocol.envs_per_command "
                            f"gives each command {envs}")
    return problems + _actions_problems(rel, protocol)


def _actions_problems(rel: str, protocol: dict) -> list[str]:
    if "noise_scale" not in protocol:
        return []  # older records: actions only
    scale = protocol["noise_scale"]
    if not (isinstance(scale, (int, float)) and not isinstance(scale, bool) and math.isfinite(scale) and scale >= 0):
        return [f"{rel}: protocol.noise_scale {str(scale)[:20]}: not a finite number >= 0, as evaluate records"]
    if "actions" in protocol and protocol["actions"] != actions_label(scale):
        return [f"{rel}: protocol.actions {str(protocol['actions'])[:60]!r}, but noise_scale {scale:g} means "
                f"{actions_label(scale)!r}"]
    return []


def evaluation_problems(rel: str, ev: dict) -> list[str]:
    """The record's summary and protocol fields against its own parts."""
    return (_protocol_problems(rel, ev) + entry_problems(rel, ev) + _pooling_problems(rel, "", ev)
            + _pooling_problems(rel, "baseline_stand_still.", ev.get("baseline_stand_still")))
