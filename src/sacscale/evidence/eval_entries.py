"""Each `per_command` entry of an evaluation record against itself and its protocol, as
sacscale.eval.evaluate counts: an episode either falls or is scored at every step from
`protocol.settle_steps` to `protocol.steps` (sacscale.eval.stand_still.counted_steps), a
fallen one at fewer. So `fall_rate` x `episodes` is a whole number of fallen episodes,
`samples` lies within what the fallen and the standing episodes give, and the errors,
tracking means and achieved velocities are null exactly where no sample was counted (an
rms error and a spread >= 0, a tracking mean in 0..1). `overall` pools every episode, so its
fall_rate and samples are held to the same bound (it may not lean on entries that lack
them). Where `overall` is these pooled (sacscale.evidence.eval_record), the entries were
its only free part. Fields an older record lacks are not compared; a set made by this code
must have them (sacscale.evidence.required_fields)."""

from __future__ import annotations

import math

from sacscale.number_kinds import is_count, is_finite_number
from sacscale.eval.stand_still import counted_steps

# per score: the least and the most evaluate can write where a sample was counted
_RANGES = {"rms_error": (0.0, math.inf), "normalised_tracking": (0.0, 1.0),
           "mean_achieved": (-math.inf, math.inf), "std_achieved": (0.0, math.inf)}


def _fallen(where: str, entry: dict) -> tuple[int | None, list[str]]:
    """How many of the entry's episodes fell (None where it does not say), and what is wrong."""
    rate, episodes = entry.get("fall_rate"), entry.get("episodes")
    if "fall_rate" not in entry or not is_count(episodes) or episodes == 0:
        return None, []
    if not (is_finite_number(rate) and 0 <= rate <= 1):
        return None, [f"{where}fall_rate {str(rate)[:20]}: not a number in 0..1, the share of its episodes that "
                      f"fell"]
    fallen = round(rate * episodes)
    if abs(rate * episodes - fallen) > 1e-6:
        return None, [f"{where}fall_rate {rate!r} of {episodes} episodes is {rate * episodes:g} fallen: not a whole "
                      f"number of episodes, as evaluate counts them"]
    return fallen, []


def _scored_steps(protocol: dict) -> tuple[int, int, int] | None:
    """(steps, settle_steps, the steps an episode that did not fall is scored at), or None
    where the protocol does not hold them as evaluate records them."""
    steps, settle = protocol.get("steps"), protocol.get("settle_steps")
    if not (is_count(steps) and is_count(settle)):
        return None
    return steps, settle, counted_steps(steps, settle)


def _samples_problems(where: str, entry: dict, fallen: int | None, scored) -> list[str]:
    samples, episodes = entry.get("samples"), entry.get("episodes")
    if "samples" not in entry:
        return []
    if not is_count(samples):
        return [f"{where}samples {str(samples)[:20]}: not a count of scored steps"]
    if fallen is None or scored is None:
        return []
    steps, settle, full = scored
    standing = episodes - fallen
    least, most = standing * full, standing * full + fallen * max(full - 1, 0)
    if least <= samples <= most:
        return []
    span = f"exactly {least}" if least == most else f"{least}..{most}"
    steps_of = f"{full} steps (protocol.settle_steps {settle} to steps {steps})"
    told = [f"{standing} did not fall, scored at all {steps_of} each"] if standing else []
    told += [f"{fallen} fell, scored at fewer" + ("" if standing else f" than {steps_of}") + " each"] if fallen else []
    return [f"{where}samples {samples}, but of its {episodes} episodes (fall_rate {entry['fall_rate']!r}) "
            f"{' and '.join(told)}: {span}"]


def _value_problem(where: str, value, counted: bool, low: float, high: float) -> str | None:
    if not counted:
        return None if value is None else (f"{where}: {str(value)[:20]}, but samples 0: with no scored step "
                                           f"evaluate stores null")
    if value is None:
        return f"{where}: null, but samples counted: evaluate stores null only where samples is 0"
    if not (is_finite_number(value) and low <= value <= high):
        return f"{where}: {str(value)[:20]}: not {_range_words(low, high)}, as evaluate writes it"
    return None


def _range_words(low: float, high: float) -> str:
    if math.isinf(high):
        return "a finite number" if math.isinf(low) else f"a number >= {low:g}"
    return f"a number in {low:g}..{high:g}"


def _score_problems(where: str, entry: dict) -> list[str]:
    """Errors, tracking means and achieved velocities: null exactly where no step was scored."""
    if not is_count(entry.get("samples")):
        return []
    counted = entry["samples"] > 0
    problems = []
    for key, (low, high) in _RANGES.items():
        part = entry.get(key)
        items = part.items() if isinstance(part, dict) else enumerate(part) if isinstance(part, list) else ()
        found = (_value_problem(f"{where}{key}.{sub}", value, counted, low, high) for sub, value in items)
        problems += [p for p in found if p]
    return problems


def _count_problems(where: str, scores: dict, scored) -> list[str]:
    """fall_rate x episodes whole, and samples within what its fallen and standing episodes give."""
    fallen, found = _fallen(where, scores)
    return found + _samples_problems(where, scores, fallen, scored)


def entry_problems(rel: str, ev: dict) -> list[str]:
    """Every per_command entry and the overall, naming the file, the command and the values."""
    protocol = ev.get("protocol") if isinstance(ev.get("protocol"), dict) else {}
    scored = _scored_steps(protocol)
    overall = ev.get("overall")
    problems = _count_problems("overall.", overall, scored) if isinstance(overall, dict) else []
    per_command = ev.get("per_command")
    for name, entry in per_command.items() if isinstance(per_command, dict) else ():
        if not isinstance(entry, dict):
            continue
        where = f"per_command.{str(name)[:40]}."
        problems += _count_problems(where, entry, scored) + _score_problems(where, entry)
    return [f"{rel}: {p}" for p in problems]
