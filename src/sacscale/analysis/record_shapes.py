"""The records' shapes: every field of analyze-run's output (metrics/<run>.json) and of
summary.json that the summary, the table and the report read, with its type. In a module of
its own so that aggregate and report check their inputs before loading pandas and scipy."""

from __future__ import annotations

from sacscale.shapes import NUMBER, Maybe

# every field of analyze-run's output that the summary, the table and the report read, of its
# type: a repeat as a string, a world size of 1.5 or ranks as an object went into summary.json
# as written, or ended in a TypeError naming no file
SERIES = ("total_env_steps", "total_fps", "episode_return", "episode_length")
_PHASES = Maybe({str: Maybe(NUMBER)})
_REACHED = Maybe({"threshold": NUMBER, "env_steps": NUMBER, "seconds": NUMBER})
METRICS_SHAPE = {
    "run": str, "config": str, "repeat": Maybe(int), "devices": Maybe(str), "world_size": Maybe(int),
    **{key: Maybe(NUMBER) for key in ("steady_env_steps_per_s", "tail_mean_total_fps", "total_env_steps",
                                      "wall_time_s", "event_span_s", "final_episode_return", "final_episode_length")},
    "iterations": Maybe(int), "exit_status": Maybe(int),
    "window": Maybe({"seconds": Maybe(NUMBER), "window_events": Maybe(int)}),
    "ranks": Maybe([{"rank": int, "phase_ms": _PHASES}]), "phase_ms": _PHASES,
    "time_to_quality": Maybe({str: _REACHED}),
    "series": Maybe({"columns": Maybe([str]), **{key: Maybe([[Maybe(NUMBER)]]) for key in SERIES}}),
    "final_tracking": Maybe({str: Maybe(NUMBER)}),
}

_SUMMARY_STATS = {"n": Maybe(int), "mean": Maybe(NUMBER), "std": Maybe(NUMBER), "min": Maybe(NUMBER),
                  "max": Maybe(NUMBER), "values": Maybe([NUMBER])}
_REACHED_ACROSS_REPEATS = {"reached": Maybe(int), "of": Maybe(int), "threshold": Maybe(NUMBER),
                           "env_steps": Maybe(_SUMMARY_STATS), "seconds": Maybe(_SUMMARY_STATS)}
_CONFIG = {**_SUMMARY_STATS, "devices": Maybe(str), "world_size": Maybe(int),
           "time_to_quality": Maybe({str: Maybe(_REACHED_ACROSS_REPEATS)}),
           "runs": Maybe([str]), "repeats": Maybe([Maybe(int)]), "tail_mean_total_fps": Maybe(_SUMMARY_STATS)}
_COMPARISON = {"baseline": str, "compared": str, "ratio_of_means": Maybe(NUMBER),
               "ratio_std_propagated": Maybe(NUMBER), "ratio_range": Maybe([NUMBER]),
               "per_repeat_ratios": Maybe({str: NUMBER}),
               "per_repeat_ratio_stats": Maybe(_SUMMARY_STATS), "ratio_ci95": Maybe([NUMBER]), "ci_repeats": Maybe(int),
               "ci_method": Maybe(str), "ci_fallback": Maybe(str), "rank_multiple": Maybe(NUMBER),
               "weak_scaling_efficiency": Maybe(NUMBER)}
# every field of summary.json that the report reads, of its type (a count as a string ended
# the report in a TypeError naming no file)
SUMMARY_SHAPE = {"configs": {str: _CONFIG}, "comparisons": Maybe([_COMPARISON]), "order": Maybe([str]),
                 "pairing": Maybe(str), "meta": Maybe(dict), "short_windows": Maybe([str]),
                 "phase_by_rank": Maybe([{"config": str, "rank": int, "phase_ms": {str: NUMBER}}])}


def _unknown(name, configs: dict) -> bool:
    return isinstance(name, str) and name not in configs


def summary_reference_problem(summary: dict) -> str | None:
    """Where a summary.json of SUMMARY_SHAPE names a configuration its `configs` lacks (the
    report looks each one up there): its key path and the name, or None."""
    configs = summary["configs"]
    for i, comparison in enumerate(summary.get("comparisons") or []):
        for key in ("baseline", "compared"):
            if _unknown(comparison[key], configs):
                return f"comparisons[{i}].{key} {comparison[key][:40]!r}: not a configuration of its configs"
    for key, names in (("order", summary.get("order") or []),
                       ("phase_by_rank", [row["config"] for row in summary.get("phase_by_rank") or []])):
        for i, name in enumerate(names):
            if _unknown(name, configs):
                where = f"{key}[{i}]" + (".config" if key == "phase_by_rank" else "")
                return f"{where} {name[:40]!r}: not a configuration of its configs"
    return None
