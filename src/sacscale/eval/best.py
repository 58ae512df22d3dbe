"""Which run's policy the report shows on video: the best of the deterministic
evaluations (`sacscale evaluate`), by one stated score.

score = mean of the normalised lin-vel and yaw-rate tracking x (1 - falls per episode),
both from the evaluation's overall figures: a policy that tracks but falls, or stands but
does not track, scores low. A tracking figure the evaluation could not give (no sample
counted: every robot fell before the settling time) counts as 0. Ties go to the run
listed first (run order).
"""

from __future__ import annotations

import math


def _or_zero(value) -> float:
    return 0.0 if value is None else float(value)


def score(evaluation: dict) -> float:
    overall = evaluation["overall"]
    kernels = overall.get("normalised_tracking") or {}
    tracking = (_or_zero(kernels.get("lin_vel_xy")) + _or_zero(kernels.get("yaw_rate"))) / 2
    falls = min(max(float(overall["fall_rate"]), 0.0), 1.0)
    value = tracking * (1.0 - falls)
    if not math.isfinite(value):
        raise ValueError(f"evaluation score is {value}")
    return value


def best_run(evaluations: dict[str, dict]) -> dict:
    """{run, score, tracking_lin, tracking_yaw, fall_rate, env_steps, scores}: the highest
    score among `evaluations` (run name -> evaluation, in run order)."""
    if not evaluations:
        raise ValueError("no evaluations to choose from")
    scores = {run: score(e) for run, e in evaluations.items()}
    run = max(scores, key=scores.get)  # max keeps the first of equal scores
    overall = evaluations[run]["overall"]
    kernels = overall.get("normalised_tracking") or {}
    return {"run": run, "score": scores[run], "tracking_lin": kernels.get("lin_vel_xy"),
            "tracking_yaw": kernels.get("yaw_rate"), "fall_rate": overall["fall_rate"],
            "env_steps": evaluations[run].get("env_steps"), "scores": scores,
            "rule": "mean normalised tracking (lin, yaw) x (1 - falls per episode), deterministic evaluation"}
