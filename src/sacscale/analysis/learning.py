"""Learning curves against env steps, to compare runs per env step (e.g. 1 rank vs 2).

Episode return and length are logged by every rank over the episodes its own envs
finished; a run's curve at a log point is the mean over ranks, placed at the run's
cumulative env steps of all ranks (`Perf/total_env_steps`, rank 0) at that iteration.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from sacscale.analysis.events import EventFileError, read_run

CURVES = {"return": "Episode/return", "length": "Episode/length"}


def learning_curves(run_dir: str | Path) -> dict[str, dict[str, list[float]]]:
    """`{"return"|"length": {"env_steps": [...], "value": [...]}}` of one run."""
    ranks = read_run(run_dir)
    total = {s.step: s.value for s in ranks[0].get("Perf/total_env_steps", [])}
    if not total:
        raise EventFileError(f"{run_dir}: no Perf/total_env_steps events in rank 0")
    out = {}
    for name, tag in CURVES.items():
        per_step: dict[int, list[float]] = {}
        for series in ranks.values():
            for s in series.get(tag, []):
                per_step.setdefault(s.step, []).append(s.value)
        steps = sorted(step for step in per_step if step in total)
        out[name] = {"env_steps": [total[s] for s in steps],
                     "value": [float(np.mean(per_step[s])) for s in steps]}
    return out


def tail_mean(curve: dict[str, list[float]], fraction: float = 0.2) -> float:
    """Mean of the last `fraction` of a curve's points (NaN for an empty curve)."""
    values = curve["value"]
    if not values:
        return float("nan")
    return float(np.mean(values[-max(1, int(len(values) * fraction)):]))


def compare_learning(runs: dict[str, str | Path], fraction: float = 0.2) -> dict:
    """Curves and end-of-run means of several runs, labelled."""
    result = {"tail_fraction": fraction, "runs": {}}
    for label, run_dir in runs.items():
        curves = learning_curves(run_dir)
        result["runs"][label] = {
            "run_dir": str(run_dir),
            "env_steps": curves["return"]["env_steps"][-1] if curves["return"]["env_steps"] else 0.0,
            "tail_mean_return": tail_mean(curves["return"], fraction),
            "tail_mean_length": tail_mean(curves["length"], fraction),
            "first_return": curves["return"]["value"][0] if curves["return"]["value"] else float("nan"),
            "first_length": curves["length"]["value"][0] if curves["length"]["value"] else float("nan"),
            "curves": curves,
        }
    return result


def plot_learning(result: dict, path: str | Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
    for label, run in result["runs"].items():
        for ax, name in zip(axes, ("return", "length")):
            curve = run["curves"][name]
            ax.plot(curve["env_steps"], curve["value"], label=label)
    for ax, name in zip(axes, ("episode return", "episode length (control steps)")):
        ax.set_xlabel("env steps, all ranks")
        ax.set_ylabel(name)
        ax.grid(alpha=0.3)
    axes[0].legend()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)
