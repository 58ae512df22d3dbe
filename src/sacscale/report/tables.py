"""The report's tables, as (header, rows, align) built from summary.json."""

from __future__ import annotations

import math

from sacscale.number_kinds import is_number
from sacscale.analysis.aggregate import BCA, phase_by_rank, recorded_ci_method
from sacscale.analysis.learning import QUALITY_FRACTION, TRACKING, tail_mean
from sacscale.analysis.metrics import QUALITY_THRESHOLDS
from sacscale.report.document import Table
from sacscale.report.text import plain

PHASE_TITLE = "Per-phase time per iteration (ms), tail mean"
CI_TITLE = "Confidence intervals of the ratios"
WINDOW_TITLE = "Measurement windows"


def num(x, digits: int = 0) -> str:
    """A recorded number; anything else a record holds there is shown as escaped text."""
    if x is None:
        return "n/a"
    return f"{x:,.{digits}f}" if is_number(x) else plain(x)


def ratio(x) -> str:
    return "n/a" if x is None else f"{x:.3f}x" if is_number(x) else plain(x)


def reproduces_seed(summary: dict) -> bool:
    """GPU run sets reproduce the seed's matrix (1 GPU against 2); CPU ranks do not."""
    return not all((s.get("devices") or "").startswith("cpu") for s in summary["configs"].values())


def in_execution_order(summary: dict, metrics: list[dict]) -> list[dict]:
    """The runs in the order they ran, whatever order the metrics files were given in."""
    ran = {name: i for i, name in enumerate(summary.get("meta", {}).get("execution_order") or [])}
    return sorted(metrics, key=lambda m: ran.get(m.get("run"), len(ran)))


def rank_label(devices: str | None, world_size: int | None) -> str:
    """'1-GPU', '2-GPU', '1-rank CPU', '2 ranks on 1 GPU' (ranks sharing a device), ..."""
    n = world_size or (len(devices.split(",")) if devices else 1)
    if devices and devices.startswith("cpu"):
        return f"{n}-rank CPU"
    gpus = len(set(devices.split(","))) if devices else 1
    if n > gpus:
        return f"{n} ranks on {gpus} GPU{'s' if gpus > 1 else ''}"
    return f"{n}-GPU"


def seed_table(summary: dict) -> Table:
    """The seed's shape: configuration, baseline steps/s, compared steps/s, ratio of means.
    The row is labelled compared / baseline, the ratio's direction."""
    configs = summary["configs"]
    comps = summary.get("comparisons", [])
    labels = {(rank_label(configs[c["baseline"]]["devices"], configs[c["baseline"]]["world_size"]),
               rank_label(configs[c["compared"]]["devices"], configs[c["compared"]]["world_size"])) for c in comps}
    if len(labels) == 1:
        base_label, comp_label = labels.pop()
        if base_label == comp_label:
            base_label, comp_label = f"baseline ({base_label})", f"compared ({comp_label})"
    else:
        base_label, comp_label = "baseline", "compared"
    rows = []
    for c in comps:
        b, o = configs[c["baseline"]], configs[c["compared"]]
        label = f"{plain(c['compared'])} / {plain(c['baseline'])} (n={o['n']}/{b['n']})"
        rows.append([
            label,
            f"{num(b['mean'])} ± {num(b['std'])}",
            f"{num(o['mean'])} ± {num(o['std'])}",
            ratio(c["ratio_of_means"]),
        ])
    return Table(
        header=["configuration", f"{plain(base_label)} steps/s", f"{plain(comp_label)} steps/s", "ratio of means"],
        rows=rows,
        align=["l", "r", "r", "r"],
        caption="this run set in the seed's shape: steady env steps/s (main figure), mean ± sample std over repeats; "
                "ratio of means = compared / baseline.",
    )


def config_table(summary: dict) -> Table:
    rows = []
    for name, s in summary["configs"].items():
        rows.append([
            plain(name), plain(s.get("devices") or "?"), plain(s.get("world_size") or "?"), str(s["n"]),
            num(s["mean"]), num(s["std"]), num(s["min"]), num(s["max"]),
            ", ".join(f"r{plain(r)}: {num(v)}" for r, v in zip(s["repeats"], s["values"])),
        ])
    return Table(
        header=["configuration", "devices", "ranks", "n", "mean", "std", "min", "max", "per repeat"],
        rows=rows,
        align=["l", "l", "r", "r", "r", "r", "r", "r", "l"],
        caption="steady env steps/s per configuration (std: sample standard deviation, n - 1).",
    )


def comparison_table(summary: dict) -> Table:
    rows = []
    for c in summary.get("comparisons", []):
        per = c.get("per_repeat_ratios") or {}
        stats = c.get("per_repeat_ratio_stats") or {}
        rng = c.get("ratio_range")
        rows.append([
            f"{plain(c['compared'])} / {plain(c['baseline'])}",
            ratio(c.get("ratio_of_means")),
            "n/a" if c.get("ratio_std_propagated") is None else f"±{c['ratio_std_propagated']:.3f}",
            ", ".join(f"r{plain(k)}: {v:.3f}" for k, v in per.items()) or "n/a",
            "n/a" if not stats.get("n") else f"{stats['min']:.3f} .. {stats['max']:.3f} (std {stats['std']:.3f})",
            "n/a" if not rng else f"{rng[0]:.3f} .. {rng[1]:.3f}",
            "n/a" if c.get("weak_scaling_efficiency") is None else f"{100 * c['weak_scaling_efficiency']:.0f}%",
        ])
    return Table(
        header=["ratio", "of means", "propagated std", "per repeat", "per-repeat spread", "extreme range",
                "weak-scaling efficiency"],
        rows=rows,
        align=["l", "r", "r", "l", "l", "l", "r"],
        caption="per repeat: compared in repeat k / baseline in repeat k (runs alternate, so repeat k ran back to "
                "back); extreme range: min/max .. max/min; efficiency = ratio / (rank multiple). n/a: not defined "
                "for this set (no paired repeat, a single repeat has no spread, or equal rank counts have no "
                "efficiency).",
    )


def runs_table(metrics: list[dict]) -> Table:
    rows = []
    for m in metrics:
        rows.append([
            plain(m["run"]), plain(m.get("config") or "?"), plain(m.get("repeat") or "?"),
            num(m["steady_env_steps_per_s"], 1), num(m.get("tail_mean_total_fps"), 1),
            plain(m.get("iterations")), num(m.get("wall_time_s"), 1), num(m.get("event_span_s"), 1),
            num(m.get("final_episode_return"), 2), num(m.get("final_episode_length"), 1),
            "; ".join(f"r{plain(r['rank'])}: {num(r.get('steady_env_steps_per_s'), 1)}" for r in m.get("ranks", [])),
        ])
    return Table(
        header=["run", "config", "repeat", "steady steps/s", "tail-mean total_fps", "iterations", "wall s",
                "event span s", "final return", "final length", "per rank steady steps/s"],
        rows=rows,
        align=["l", "l", "r", "r", "r", "r", "r", "r", "r", "r", "l"],
        caption="in execution order. tail-mean total_fps is a different definition (see Metric definitions). "
                "final return and final length: the last logged episode means of rank 0; n/a where no episode "
                "ended within a logging interval of the run (short runs end before their first episode does) "
                "or the run logged none; wall s n/a: no run record.",
    )


def phase_table(metrics: list[dict]) -> Table | None:
    """One row per (configuration, rank) of the traced runs, one column per phase; None when
    no run was traced."""
    rows = phase_by_rank(metrics)
    if not rows:
        return None
    phases = sorted({p for r in rows for p in r["phase_ms"]})
    return Table(
        header=["configuration", "rank", "runs", *(plain(p.removesuffix("_ms")) for p in phases)],
        rows=[[plain(r["config"]), plain(r["rank"]), str(r["runs"]), *(num(r["phase_ms"].get(p), 3) for p in phases)]
              for r in rows],
        align=["l", "r", "r", *["r"] * len(phases)],
        caption="ms per iteration: mean of each rank's `Time/<phase>_ms` over its last 50% of events, then mean "
                "over the configuration's runs (repeats). Collector and learner phases overlap in time; do not "
                "add them up.",
    )


# Fewer paired repeats than this: no interval is printed (a bootstrap over so few is too narrow).
MIN_REPEATS = 3


def _method_words(summary: dict) -> str:
    """The interval method the set recorded, as the caption names it."""
    if recorded_ci_method(summary) == BCA:
        return "bias-corrected and accelerated (BCa)"
    return "percentile method"


def ci_table(summary: dict) -> Table:
    rows = []
    for c in summary.get("comparisons", []):
        ci = c.get("ratio_ci95")
        few = ci and (c.get("ci_repeats") or 0) < MIN_REPEATS
        rows.append([
            f"{plain(c['compared'])} / {plain(c['baseline'])}",
            ratio(c.get("ratio_of_means")),
            "n/a" if not ci else f"not shown (n < {MIN_REPEATS})" if few else f"{ci[0]:.3f} .. {ci[1]:.3f}",
            str(c.get("ci_repeats", 0)),
        ])
    return Table(
        header=["ratio", "of means", "95% CI", "paired repeats"],
        rows=rows,
        align=["l", "r", "l", "r"],
        caption="95% confidence interval of the ratio of means: paired bootstrap over repeats (both "
                f"configurations of repeat k ran back to back with seed k), {_method_words(summary)}; see summary.json "
                f"ci_method. Not shown below {MIN_REPEATS} paired repeats: a bootstrap over so few is too narrow "
                "to read. n/a: fewer than 2 paired repeats (or a set made before intervals were computed).",
    )


def window_table(metrics: list[dict], short_s: float = 30.0) -> Table:
    rows = []
    for m in metrics:
        w = m.get("window") or {}
        seconds = w.get("seconds")
        rows.append([
            plain(m["run"]), num(seconds, 1), plain(w.get("window_events", "?")), plain(w.get("events", "?")),
            f"{plain(w.get('first_step', '?'))} .. {plain(w.get('last_step', '?'))}",
            f"below {short_s:g} s" if seconds is not None and seconds < short_s else "",
        ])
    return Table(
        header=["run", "window s", "window events", "events", "steps", "warning"],
        rows=rows,
        align=["l", "r", "r", "r", "l", "l"],
        caption="the steady rate's window: the last 50% of rank 0's Perf/total_env_steps events, its wall-clock "
                "length and event count; a window below 30 s gives a rate dominated by a few logging intervals.",
    )


QUALITY_TITLE = "Learning quality: deterministic evaluation of each run's final policy"


def quality_table(evaluations: dict[str, dict], metrics: list[dict]) -> Table | None:
    """Per configuration, the mean over its runs of the evaluation's rms errors (and their
    ratio to standing still), the fall rate and the tracking kernels; None without any."""
    if not evaluations:
        return None
    config_of = {m["run"]: m.get("config") or "?" for m in metrics}
    by_config: dict[str, list[dict]] = {}
    for run, e in evaluations.items():
        by_config.setdefault(config_of.get(run, "?"), []).append(e)

    def mean(values):
        values = [v for v in values if isinstance(v, (int, float)) and v == v]
        return sum(values) / len(values) if values else None

    rows = []
    for config, evals in by_config.items():
        o = [e["overall"] for e in evals]
        r = [e["ratio_to_stand_still"] for e in evals]
        k = [e["overall"].get("normalised_tracking") or {} for e in evals]  # older records lack it
        rows.append([
            plain(config), str(len(evals)), num(mean([e.get("env_steps") for e in evals])),
            num(mean([x["rms_error"].get("lin_vel_xy") for x in o]), 3), ratio(mean([x.get("lin_vel_xy") for x in r])),
            num(mean([x["rms_error"].get("yaw_rate") for x in o]), 3), ratio(mean([x.get("yaw_rate") for x in r])),
            num(mean([x["fall_rate"] for x in o]), 3),
            num(mean([x.get("lin_vel_xy") for x in k]), 3), num(mean([x.get("yaw_rate") for x in k]), 3),
        ])
    first = next(iter(evaluations.values()))["protocol"]
    return Table(
        header=["config", "runs", "env steps / rank", "lin rms m/s", "x stand-still", "yaw rms rad/s",
                "x stand-still", "falls / episode", "kernel lin", "kernel yaw"],
        rows=rows,
        align=["l", "r", "r", "r", "r", "r", "r", "r", "r", "r"],
        caption=(f"means over each configuration's runs of `sacscale evaluate` ({plain(first['envs_per_command'])} "
                 "envs x "
                 f"{len(first['commands'])} commands, {first['seconds']:g} s episodes scored after "
                 f"{first['settle_s']:g} s, "
                 "deterministic actions): rms errors of the planar velocity (heading frame) and of the torso's "
                 "yaw rate, "
                 "their ratio to a robot that stands still (below 1: better than standing still), falls per "
                 "episode, and "
                 "the task's tracking kernels (1: perfect). n/a: the evaluation recorded no value "
                 "(no counted sample)."),
    )


LOGGED_TRACKING_TITLE = "Logged tracking of the training policy"


def logged_tracking_table(learning: dict[str, dict] | None, baselines: dict[str, float],
                          env_steps: dict[str, float] | None = None) -> Table | None:
    """Per run (grouped by configuration, as `curves_by_config` gives them): the tracking
    rewards the training policy earned, each over its maximum, mean of the last 10% of
    the run's log points: the learning issue's logged measure, beside what standing still
    earns. None without any tracking curve (e.g. only the reference trainer's runs).
    `env_steps`: each run's env steps of all ranks (its metrics' total_env_steps); a run
    not in it shows the last env steps any of its curves logged."""
    rows = []
    for config, group in (learning or {}).items():
        for run, curves in group["runs"].items():
            values = [tail_mean(curves[term], QUALITY_FRACTION) / baselines[f"{term}_max"] for term in TRACKING]
            if all(math.isnan(v) for v in values):  # no tracking terms logged (the reference trainer's)
                continue
            rows.append([plain(run), plain(config), num(_run_env_steps(run, curves, env_steps)),
                         *(num(None if math.isnan(v) else v, 2) for v in values)])
    if not rows:
        return None
    still = [num(baselines[term] / baselines[f"{term}_max"], 2) for term in TRACKING]
    return Table(
        header=["run", "config", "env steps (all ranks)", "lin-vel tracking", "yaw-rate tracking"],
        rows=rows,
        align=["l", "l", "r", "r", "r"],
        caption=(f"the training policy's (stochastic actions, observation noise, randomised gains) tracking rewards "
                 f"over their maxima, mean over the last {QUALITY_FRACTION:.0%} of each run's log points (mean over "
                 f"ranks); 1 = perfect, a robot that stands still earns {still[0]} and {still[1]}. The learning "
                 f"targets ask >= 0.75 (lin) and >= 0.65 (yaw) within 15M env steps. Runs without tracking terms "
                 f"(the reference trainer's) are left out."),
    )


def _run_env_steps(run: str, curves: dict, env_steps: dict[str, float] | None) -> float | None:
    """The run's env steps, not one curve's last point: a curve ends where its last event
    was logged (the episode length only where an episode ended), before the run does."""
    if env_steps and isinstance(env_steps.get(run), (int, float)):
        return env_steps[run]
    ends = [c["env_steps"][-1] for c in curves.values() if isinstance(c, dict) and c.get("env_steps")]
    return max(ends) if ends else None


TIME_TO_QUALITY_TITLE = "Time to quality"
TRAINERS_TITLE = "The trainers side by side"
QUALITY_LABELS = {"episode_length": "episode length >= {t:g}",
                  "normalised_tracking_lin_vel": "lin-vel tracking >= {t:g} of max",
                  "normalised_tracking_ang_vel": "yaw-rate tracking >= {t:g} of max"}


def time_to_quality_table(summary: dict) -> Table | None:
    """Per configuration and learning-quality threshold: the repeats that reached it and
    the mean env steps and seconds at which they did (summary configs' time_to_quality);
    None when the summary has none (made before it was measured) or no repeat reached any
    threshold."""
    rows = []
    for name, s in summary["configs"].items():
        ttq = s.get("time_to_quality") or {}
        for key, (_, threshold) in QUALITY_THRESHOLDS.items():
            q = ttq.get(key)
            if q is None or not q.get("reached"):
                continue
            reached = f"{plain(q['reached'])}/{plain(q['of'])}"
            rows.append([plain(name), QUALITY_LABELS.get(key, key).format(t=threshold), reached,
                         num(q["env_steps"]["mean"]), num(q["seconds"]["mean"], 1)])
    if not rows:
        return None
    return Table(
        header=["configuration", "threshold", "reached", "env steps (mean)", "seconds (mean)"],
        rows=rows,
        align=["l", "l", "r", "r", "r"],
        caption="when each run first held the threshold over 5 log points (mean over ranks; env steps of all ranks, "
                "seconds since the run started), mean over the repeats that reached it; n/a: none did.",
    )


def _mean_of(values: list) -> float | None:
    values = [v for v in values if v is not None]
    return sum(values) / len(values) if values else None


def share(x) -> str:
    return "n/a" if x is None else f"{100 * x:.0f}%"


def trainers_table(summary: dict, metrics: list[dict], trainers: dict[str, str]) -> Table:
    """The configurations side by side with the trainer each ran (ours or the reference's):
    the same steady figure, the physics share of the iteration, the last logged episode
    length, the env steps to a surviving policy (episode length 950), and the normalised
    tracking at the end (metrics' physics_share and final_tracking, mean over repeats)."""
    rows = []
    for name, s in summary["configs"].items():
        runs = [m for m in metrics if m.get("config") == name]
        length = _mean_of([m.get("final_episode_length") for m in runs])
        physics = _mean_of([m.get("physics_share") for m in runs])
        tracking = {term: _mean_of([(m.get("final_tracking") or {}).get(term) for m in runs])
                    for term in ("tracking_lin_vel", "tracking_ang_vel")}
        ttq = (s.get("time_to_quality") or {}).get("episode_length") or {}
        rows.append([plain(name), plain(trainers.get(name, "sacscale")), num(s["mean"]), num(s["std"]), str(s["n"]),
                     share(physics), num(length),
                     num((ttq.get("env_steps") or {}).get("mean")) if ttq else "n/a",
                     num(tracking["tracking_lin_vel"], 2), num(tracking["tracking_ang_vel"], 2)])
    return Table(
        header=["configuration", "trainer", "env steps/s (mean)", "std", "n", "physics share",
                "final episode length", "env steps to length 950", "lin-vel tracking (end)", "yaw tracking (end)"],
        rows=rows,
        align=["l", "l", "r", "r", "r", "r", "r", "r", "r", "r"],
        caption="sacscale: this project's trainer; unilab: the reference trainer (unilab 1.5.2) through the same "
                "plan, runs and metric (its events read in our tags: trainers.unilab). Physics share: the physics "
                "wall time per iteration (one control step of every env of a rank) over the wall time per iteration, "
                "over the window of the steady figure (ours: the simulation pool's time, `Time/collector_physics_ms`, "
                "logged only with trace: true; the reference: its backend step, `Perf/collector_env_step_backend_ms`); "
                "n/a: the runs do not log it (ours without trace: true). Tracking: the weighted per-step lin-vel "
                "and yaw-rate tracking terms over "
                "their maximum (1: perfect), mean over the last 10% of each run's env steps (the reference's rates x "
                "its ctrl_dt, the scale of ours). n/a: not logged or not reached; all figures mean over the repeats.",
    )
