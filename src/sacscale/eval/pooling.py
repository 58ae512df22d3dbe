"""What an evaluation record's summary fields are, given its parts, without MuJoCo or torch:
`overall` pools every episode and every counted sample of the per-command groups (so it is
the per-command scores weighted by their episodes or samples), `actions` names how actions
were drawn at `noise_scale`, and `ratio_to_stand_still` is an rms error over the stand-still
one. sacscale.eval.evaluate writes them; verify reads them back from a record
(sacscale.evidence.eval_record, sacscale.evidence.eval_stand_still)."""

from __future__ import annotations

import math

# the per-command scores that pool over counted samples: means of errors squared (rms_error)
# and means of the tracking kernel (normalised_tracking)
SAMPLE_MEANS = ("normalised_tracking",)
SAMPLE_RMS = ("rms_error",)


def actions_label(noise_scale: float) -> str:
    """How evaluate drew its actions at `noise_scale` (the record's `protocol.actions`)."""
    if noise_scale == 0:
        return "deterministic: tanh(mean)"
    if noise_scale == 1:
        return "stochastic: sampled as in training (diagnostic)"
    return f"stochastic: sampled with {noise_scale:g} x the policy's std (diagnostic)"


def _ratio(a: float | None, b: float | None) -> float | None:
    """a / b; None (null) where the stand-still error is 0 (the stand command) or a is no
    number (NaN: a group with no counted sample)."""
    return a / b if b is not None and b > 0 and a is not None and math.isfinite(a) else None


def ratios(policy: dict, baseline: dict) -> dict:
    """`ratio_to_stand_still`: each of the policy's rms errors over the stand-still robot's."""
    return {k: _ratio(policy["rms_error"][k], baseline["rms_error"][k]) for k in policy["rms_error"]}


def _weighted(parts: list[dict], key: str, sub: str, weight: str, squared: bool) -> float:
    """The mean of parts[i][key][sub] over what it was a mean of (parts[i][weight] items);
    groups with no counted item hold NaN (null in JSON) and weigh nothing."""
    total = sum(p[weight] for p in parts if p[weight])
    if not total:
        return math.nan
    values = [(p[key][sub], p[weight]) for p in parts if p[weight]]
    if squared:
        return math.sqrt(sum(v * v * n for v, n in values) / total)
    return sum(v * n for v, n in values) / total


def pooled_overall(per_command: dict[str, dict]) -> dict:
    """`overall` from the per-command scores: episodes and samples summed, the fall rate
    weighted by episodes, the sample means and rms errors by samples. Only the fields every
    group holds (older records hold fewer)."""
    parts = list(per_command.values())
    if not parts:
        return {}
    shared = set.intersection(*(set(p) for p in parts))
    overall: dict = {}
    for key in (k for k in SAMPLE_MEANS + SAMPLE_RMS if k in shared and "samples" in shared):
        subs = [s for s in parts[0][key] if all(s in p[key] for p in parts)]
        overall[key] = {s: _weighted(parts, key, s, "samples", key in SAMPLE_RMS) for s in subs}
    if {"fall_rate", "episodes"} <= shared:
        episodes = sum(p["episodes"] for p in parts)
        overall["fall_rate"] = sum(p["fall_rate"] * p["episodes"] for p in parts) / episodes if episodes else math.nan
    for count in ("episodes", "samples"):
        if count in shared:
            overall[count] = sum(p[count] for p in parts)
    return overall
