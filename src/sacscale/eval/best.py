"""Which run's policy the report shows on video: the best of the deterministic
evaluations (`sacscale evaluate`), by one stated score.

score = mean of the normalised lin-vel and yaw-rate tracking x (1 - falls per episode),
both from the evaluation's overall figures: a policy that tracks but falls, or stands but
does not track, scores low. Ties go to the run listed first (run order).
"""

from __future__ import annotations

import math


def score(evaluation: dict) -> float:
    overall = evaluation["overall"]
    kernels = overall["normalised_tracking"]
    tracking = (float(kernels["lin_vel_xy"]) + float(kernels["yaw_rate"])) / 2
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
    run = max(scores, key=lambda r: (scores[r], -list(scores).index(r)))
    overall = evaluations[run]["overall"]
    return {"run": run, "score": scores[run], "tracking_lin": overall["normalised_tracking"]["lin_vel_xy"],
            "tracking_yaw": overall["normalised_tracking"]["yaw_rate"], "fall_rate": overall["fall_rate"],
            "env_steps": evaluations[run].get("env_steps"), "scores": scores,
            "rule": "mean normalised tracking (lin, yaw) x (1 - falls per episode), deterministic evaluation"}
