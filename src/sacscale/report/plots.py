"""The report's figures (matplotlib, Agg backend; PNG)."""

from __future__ import annotations

import hashlib
import io
from functools import cache
from pathlib import Path

from sacscale.pyplot import pyplot

plt = pyplot()  # Agg and matplotlib's defaults, whatever a matplotlibrc here says: verify draws them again
import matplotlib  # noqa: E402
from matplotlib.ticker import EngFormatter  # noqa: E402
from PIL import Image, PngImagePlugin  # noqa: E402

import sacscale.analysis.learning as learning_module  # noqa: E402
from sacscale.analysis.aggregate import phase_by_rank  # noqa: E402
from sacscale.analysis.learning import finite, tracking_baselines  # noqa: E402
from sacscale.atomic import move_into_place, open_temporary, refuse_foreign_links, temporary_path  # noqa: E402
from sacscale.report.figure_names import DRAWN_WITH_KEY, FIGURES, NAME_KEY  # noqa: E402

STEADY = "steady env steps/s (last 50% of events)"


def _colors(names):
    cmap = plt.get_cmap("tab10")
    return {name: cmap(i % 10) for i, name in enumerate(names)}


# A line plot needs few colours: a 64-colour palette PNG is about a third of the RGBA
# one and looks the same, which keeps a set's report inside its size budget.
PALETTE_COLOURS = 64


# The modules whose code decides a figure's pixels (the curves come from the analysis).
_DRAWING_CODE = (Path(__file__), Path(learning_module.__file__))


@cache
def drawing_record() -> str:
    """What draws the figures: matplotlib's version and a hash of the drawing code. Two
    checkouts with the same record draw the same pixels from the same evidence."""
    code = hashlib.sha256(b"".join(p.read_bytes() for p in _DRAWING_CODE)).hexdigest()[:12]
    return f"matplotlib {matplotlib.__version__}, drawing code {code}"


def _palette_png(source, target, name: str) -> None:
    with Image.open(source) as image:
        flat = image.convert("RGB").quantize(PALETTE_COLOURS, method=Image.Quantize.MEDIANCUT,
                                             dither=Image.Dither.NONE)
    info = PngImagePlugin.PngInfo()
    info.add_text(NAME_KEY.decode(), name)  # what verify reads back (figure_names.drawn_as)
    info.add_text(DRAWN_WITH_KEY.decode(), drawing_record())
    flat.save(target, "PNG", optimize=True, pnginfo=info)


def figure_png(fig, name: str) -> bytes:
    """`fig` as the figures' PNG (a palette, the name it is written under and what drew it
    recorded inside), for a caller that writes it together with another output; `fig` closed."""
    try:
        drawn, flat = io.BytesIO(), io.BytesIO()
        fig.savefig(drawn, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None},
                    facecolor="white")
        drawn.seek(0)
        _palette_png(drawn, flat, name)
        return flat.getvalue()
    finally:
        plt.close(fig)


def _save(fig, path: Path) -> None:
    refuse_foreign_links(path)
    png = figure_png(fig, path.name)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temporary_path(path)  # of this process and thread: two reports into one folder do not collide
    try:
        with open_temporary(tmp) as out:  # never through a link put at the temporary name
            out.write(png)
        move_into_place(tmp, path)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)  # a full disk leaves no partial figure
        if isinstance(exc, OSError) and not exc.filename:
            raise OSError(exc.errno, exc.strerror, str(path)) from None  # named: one line (sacscale.cli)
        raise


def throughput_by_repeat(summary: dict, path: Path) -> None:
    configs = summary["configs"]
    colors = _colors(configs)
    fig, ax = plt.subplots(figsize=(7, 4))
    for i, (name, stats) in enumerate(configs.items()):
        ax.plot(stats["repeats"], stats["values"], color=colors[name], label=name, ms=6,
                **config_style(i, len(configs)))
    ax.set_xlabel("repeat")
    ax.set_ylabel(STEADY)
    ax.set_title("Per-run throughput by repeat")
    repeats = sorted({r for s in configs.values() for r in s["repeats"] if r is not None})
    if repeats:
        ax.set_xticks(repeats)
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend()
    _save(fig, path)


def scaling_points(summary: dict) -> list[dict]:
    """The scaling curve's points: each comparison of a single-rank baseline with a
    configuration of more ranks, as {ranks, config, speedup, ci, efficiency}; the
    baseline itself at 1 rank. Empty unless the set has at least three rank counts."""
    configs = summary["configs"]
    counts = {s.get("world_size") or 1 for s in configs.values()}
    if len(counts) < 3:
        return []
    points, baseline = [], None
    for c in summary.get("comparisons", []):
        base, other = configs.get(c["baseline"]), configs.get(c["compared"])
        if not base or not other or (base.get("world_size") or 1) != 1 or c.get("ratio_of_means") is None:
            continue
        baseline = baseline or c["baseline"]  # one curve: the first single-rank baseline's (not n1_total's)
        if c["baseline"] != baseline:
            continue
        k = other.get("world_size") or 1
        if k == 1:
            continue
        points.append({"ranks": k, "config": c["compared"], "baseline": c["baseline"],
                       "speedup": c["ratio_of_means"], "ci": c.get("ratio_ci95"),
                       "efficiency": c["ratio_of_means"] / k})
    return sorted(points, key=lambda p: p["ranks"])


def _scaling_curve(ax_speed, ax_eff, points: list[dict]) -> None:
    ranks = [1] + [p["ranks"] for p in points]
    speed = [1.0] + [p["speedup"] for p in points]
    # a bootstrap interval need not hold the ratio of means (BCa's bias correction can move it
    # past it): the bar is drawn to the interval's far end only, never a negative length
    low = [0.0] + [max(0.0, p["speedup"] - p["ci"][0]) if p["ci"] else 0.0 for p in points]
    high = [0.0] + [max(0.0, p["ci"][1] - p["speedup"]) if p["ci"] else 0.0 for p in points]
    ax_speed.errorbar(ranks, speed, yerr=[low, high], marker="o", capsize=5, label="measured (95% CI)")
    ax_speed.plot(ranks, ranks, ls=":", color="gray", label="linear (efficiency 1)")
    ax_speed.set_xlabel("GPUs (ranks)")
    ax_speed.set_ylabel(f"speed-up over {points[0]['baseline']}")
    ax_speed.set_xticks(ranks)
    ax_speed.grid(alpha=0.3)
    ax_speed.legend(fontsize=8)
    eff = [1.0] + [p["efficiency"] for p in points]
    elow = [0.0] + [d / p["ranks"] for d, p in zip(low[1:], points)]
    ehigh = [0.0] + [d / p["ranks"] for d, p in zip(high[1:], points)]
    ax_eff.errorbar(ranks, eff, yerr=[elow, ehigh], marker="s", capsize=5, color="tab:green")
    ax_eff.axhline(1.0, ls=":", color="gray")
    ax_eff.set_xlabel("GPUs (ranks)")
    ax_eff.set_ylabel("per-rank efficiency (speed-up / ranks)")
    ax_eff.set_xticks(ranks)
    ax_eff.set_ylim(0, max(1.1, max(e + h for e, h in zip(eff, ehigh)) * 1.05))
    ax_eff.grid(alpha=0.3)


def scaling_bars(summary: dict, path: Path) -> None:
    """Mean per configuration with its repeats; with three or more rank counts, the
    scaling curve beside it (speed-up and per-rank efficiency against GPUs, 95% CIs of
    the paired bootstrap)."""
    configs = summary["configs"]
    names = list(configs)
    colors = _colors(names)
    points = scaling_points(summary)
    width = max(5, 1.6 * len(names) + 2)
    if points:
        fig, (ax, ax_speed, ax_eff) = plt.subplots(1, 3, figsize=(width + 9, 4))
        _scaling_curve(ax_speed, ax_eff, points)
    else:
        fig, ax = plt.subplots(figsize=(width, 4))
    means = [configs[n]["mean"] for n in names]
    stds = [configs[n]["std"] or 0.0 for n in names]
    ax.bar(names, means, yerr=stds, capsize=6, color=[colors[n] for n in names], alpha=0.8)
    for i, n in enumerate(names):
        ax.scatter([i] * len(configs[n]["values"]), configs[n]["values"], color="black", s=12, zorder=3)
    for c in summary.get("comparisons", []):
        if c.get("ratio_of_means") is not None and c["compared"] in names:
            i = names.index(c["compared"])
            top = configs[c["compared"]]["max"] + (configs[c["compared"]]["std"] or 0.0)
            ax.annotate(f"{c['ratio_of_means']:.2f}x vs {c['baseline']}", (i, top),
                        textcoords="offset points", xytext=(0, 8), ha="center", fontsize=9)
    ax.set_ylabel(STEADY)
    ax.set_title("Mean over repeats (bars: std; dots: each repeat)")
    ax.set_ylim(bottom=0, top=max(max(configs[n]["max"] + (configs[n]["std"] or 0.0) for n in names) * 1.2, 1e-9))
    ax.grid(axis="y", alpha=0.3)
    _save(fig, path)


# One style per configuration, in order, so that lines of different configurations stay
# apart where they overlap: colour, marker and dash all differ, and the first (baseline)
# configurations are drawn on top of later ones.
MARKERS = ["o", "s", "^", "D", "v", "P"]
RUN_LW, MEAN_LW = 0.8, 2.2  # learning curves: each run, the mean over a configuration's runs
DASHES = ["-", "--", "-.", ":"]


def config_style(index: int, count: int) -> dict:
    return {"marker": MARKERS[index % len(MARKERS)], "ls": DASHES[index % len(DASHES)],
            "zorder": 2 + count - index}


def _series_plot(metrics: list[dict], key: str, ylabel: str, title: str, path: Path) -> bool:
    """One line per run (colour, marker, dash: its configuration; filled or hollow markers:
    odd or even repeat; a marker at every point, so a run with a single point shows);
    False when no run has a point."""
    configs = list(dict.fromkeys(m["config"] for m in metrics))
    colors = _colors(configs)
    fig, ax = plt.subplots(figsize=(7, 4))
    plotted = False
    for m in metrics:
        points = m.get("series", {}).get(key) or []
        if not points:
            continue
        plotted = True
        style = config_style(configs.index(m["config"]), len(configs))
        # repeats of one configuration: filled markers on odd repeats, hollow on even ones
        hollow = (m.get("repeat") or 1) % 2 == 0
        ax.plot([p[0] for p in points], [p[2] for p in points], color=colors[m["config"]], ms=4, alpha=0.85,
                mfc="white" if hollow else colors[m["config"]], label=f"{m['config']} r{m.get('repeat')}", **style)
    if not plotted:
        ax.text(0.5, 0.5, f"no {key.replace('_', ' ')} events: not drawn", ha="center", va="center",
                transform=ax.transAxes)
        ax.set_axis_off()
    else:
        ax.legend(fontsize=8, ncol=2)
    ax.set_xlabel("seconds since the run's first Perf/total_env_steps event")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    _save(fig, path)
    return plotted


def cumulative_steps(metrics: list[dict], path: Path) -> bool:
    return _series_plot(metrics, "total_env_steps", "cumulative env steps (all ranks)",
                        "Cumulative env steps vs wall time", path)


def return_vs_time(metrics: list[dict], path: Path) -> bool:
    return _series_plot(metrics, "episode_return", "episode return (rank 0, interval mean)",
                        "Episode return vs wall time", path)


def phase_label(config: str, rank: int) -> str:
    return f"{config} rank{rank}"


# Which bar a Time/<phase> tag stacks on. The collector's main-thread phases add up to its
# iteration, the learner's to its own; they run concurrently, so each has its own bar. The
# pool's physics time gets a third bar: with the halves pipeline most of it is hidden
# behind the collector's other phases. physics_wait is inside env_step: not drawn.
PHASE_BARS = {
    "collector": ("collector_env_step_ms", "collector_action_select_ms", "collector_replay_write_ms",
                  "collector_weight_sync_ms"),
    "learner": ("learner_wait_ms", "learner_h2d_ms", "learner_update_ms"),
    "pool physics": ("collector_physics_ms",),
}
NOT_DRAWN = ("collector_physics_wait_ms",)


def phase_times(metrics: list[dict], path: Path) -> bool:
    """Per rank of each traced configuration (mean over its repeats), grouped by
    configuration: a stacked bar of the collector's phases, one of the learner's, and the
    pool's physics time when logged; False (and a note) without Time/* tags."""
    rows = phase_by_rank(metrics)
    fig, ax = plt.subplots(figsize=(8.5, max(3, 1.1 * len(rows) + 1.5)))
    if not rows:
        ax.text(0.5, 0.5, "Not drawn: no Time/* tags, the runs were not traced\n"
                "(the report leaves this figure out; trace: true in a run configuration turns tracing on)",
                ha="center", va="center", transform=ax.transAxes, wrap=True)
        ax.set_axis_off()
        _save(fig, path)
        return False
    logged = {p for r in rows for p in r["phase_ms"]}
    known = {p for phases in PHASE_BARS.values() for p in phases}
    bars = {name: [p for p in phases if p in logged] for name, phases in PHASE_BARS.items()}
    bars["other"] = sorted(logged - known - set(NOT_DRAWN))
    bars = {name: phases for name, phases in bars.items() if phases}
    colors = _colors([p for phases in bars.values() for p in phases])
    y, ticks, labels, pos = [], [], [], 0.0
    for r in rows:
        start = pos
        for name in bars:
            y.append((r, name, pos))
            ticks.append(pos)
            labels.append(f"{phase_label(r['config'], r['rank'])}: {name}" if pos == start else name)
            pos += 1.0
        pos += 0.6  # a gap between ranks
    drawn = set()
    for r, name, at in y:
        left = 0.0
        for phase in bars[name]:
            value = r["phase_ms"].get(phase) or 0.0
            ax.barh(at, value, left=left, color=colors[phase], label=None if phase in drawn else phase)
            drawn.add(phase)
            left += value
    ax.set_yticks(ticks, labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("ms per iteration (tail mean, mean over repeats)")
    ax.set_title("Per-phase time per rank: collector, learner and simulation pool run concurrently",
                 fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    _save(fig, path)
    return True


# Panels of learning_curves.png, row by row: curve name -> axis label
LEARNING_PANELS = {
    "length": "episode length (control steps; 1000 = time-out)",
    "tracking_lin_vel": "lin-vel tracking reward per control step\n(env mean, x weight 2 x 0.02: max 0.04)",
    "return": "episode return (sum of the scaled rewards)",
    "tracking_ang_vel": "ang-vel tracking reward per control step\n(env mean, x weight 1.5 x 0.02: max 0.03)",
}


def learning_label(config: str, runs: int) -> str:
    return f"{config} (mean of {runs} runs)" if runs != 1 else f"{config} (1 run)"


def learning_curves(groups: dict[str, dict] | None, path: Path, note: str | None = None,
                    baselines: dict[str, float] | None = None) -> bool:
    """learning_curves_figure, written to `path`; False when no curve has a point."""
    fig, plotted = learning_curves_figure(groups, note, baselines)
    _save(fig, path)
    return plotted


def learning_curves_figure(groups: dict[str, dict] | None, note: str | None = None,
                           baselines: dict[str, float] | None = None):
    """(figure, whether a curve has a point): 2x2 panels (LEARNING_PANELS) against
    cumulative env steps of all ranks: per configuration every run thin and the mean over
    its runs thick (sacscale.analysis.learning.curves_by_config). `baselines`
    (stand_still_tracking) draws what a robot standing still earns, dashed, and perfect
    tracking, dotted, on the tracking panels.
    Empty curves draw nothing; False (and a placeholder figure) when no curve has a point."""
    groups = groups or {}
    colors = _colors(groups)
    styles = {config: config_style(i, len(groups)) for i, config in enumerate(groups)}
    fig, axes = plt.subplots(2, 2, figsize=(11, 7.5), sharex=True)
    plotted = False
    for ax, (name, ylabel) in zip(axes.ravel(), LEARNING_PANELS.items()):
        for config, group in groups.items():
            mean = group["mean"][name]
            # without a mean (runs with no common env steps) the first thin line carries the label
            label = None if mean["env_steps"] else f"{config} (runs only: no common env steps)"
            for curves in group["runs"].values():
                curve = finite(curves[name])
                if curve["env_steps"]:
                    plotted = True
                    ax.plot(curve["env_steps"], curve["value"], color=colors[config], lw=RUN_LW, alpha=0.5, ms=2.5,
                            label=label, **styles[config])
                    label = None
            if mean["env_steps"]:
                ax.plot(mean["env_steps"], mean["value"], color=colors[config], lw=MEAN_LW, alpha=0.85,
                        ls=styles[config]["ls"], zorder=styles[config]["zorder"] + 10,
                        label=learning_label(config, mean["runs"]))
        if baselines and name in baselines:
            ax.axhline(baselines[name], color="0.3", ls="--", lw=1.0, label="standing still")
            ax.axhline(baselines[f"{name}_max"], color="0.3", ls=":", lw=1.0, label="perfect tracking")
        ax.set_ylabel(ylabel, fontsize=9)
        ax.grid(alpha=0.3)
        ax.xaxis.set_major_formatter(EngFormatter(sep=""))
    for ax in axes[1]:
        ax.set_xlabel("cumulative env steps, all ranks (rank 0 Perf/total_env_steps)")
        ax.tick_params(labelbottom=True)
    if not plotted:
        fig.clear()
        ax = fig.add_subplot()
        ax.text(0.5, 0.5, note or "no learning-curve events (Episode/length, Episode/return, Reward/tracking_*)",
                ha="center", va="center", transform=ax.transAxes, wrap=True)
        ax.set_axis_off()
        return fig, False
    # one legend, in the first panel with lines: every configuration (and run count) drawn in any panel
    entries = {}
    for ax in axes.ravel():
        for handle, label in zip(*ax.get_legend_handles_labels()):
            entries.setdefault(label, handle)
    first = next(ax for ax in axes.ravel() if ax.get_legend_handles_labels()[0])
    first.legend(list(entries.values()), list(entries), fontsize=8)
    fig.suptitle("Learning per env step: thin lines with markers each run, thick the mean over a "
                 "configuration's runs (reward and length: mean over ranks)", fontsize=10)
    fig.tight_layout()
    return fig, True


def figures_with_data(metrics: list[dict], learning: dict[str, dict] | None) -> dict[str, bool]:
    """`{name: has_data}` as write_all returns it, without drawing: which figures the report
    shows (verify composes the page again from this)."""
    curves = (finite(run[name]) for group in (learning or {}).values() for run in group["runs"].values()
              for name in LEARNING_PANELS)
    return {
        "throughput_by_repeat": True,
        "scaling_bars": True,
        "cumulative_steps": any(m.get("series", {}).get("total_env_steps") for m in metrics),
        "return_vs_time": any(m.get("series", {}).get("episode_return") for m in metrics),
        "phase_times": bool(phase_by_rank(metrics)),
        "learning_curves": any(curve["env_steps"] for curve in curves),
    }


def write_all(summary: dict, metrics: list[dict], figures_dir: str | Path, learning: dict[str, dict] | None = None,
              learning_note: str | None = None) -> dict[str, bool]:
    """Write every figure the workflow declares; `{name: has_data}`. A figure without data
    is still written (a file that says "not drawn" and why) but the report leaves it out.
    `learning`: curves_by_config() of the run directories (None: no run directories given)."""
    d = Path(figures_dir)
    throughput_by_repeat(summary, d / FIGURES["throughput_by_repeat"])
    scaling_bars(summary, d / FIGURES["scaling_bars"])
    stepped = cumulative_steps(metrics, d / FIGURES["cumulative_steps"])
    returned = return_vs_time(metrics, d / FIGURES["return_vs_time"])
    traced = phase_times(metrics, d / FIGURES["phase_times"])
    baselines = tracking_baselines() if learning else None
    learned = learning_curves(learning, d / FIGURES["learning_curves"], learning_note, baselines=baselines)
    return {
        "throughput_by_repeat": True,
        "scaling_bars": True,
        "cumulative_steps": stepped,
        "return_vs_time": returned,
        "phase_times": traced,
        "learning_curves": learned,
    }
