"""Learning curves per env step: rank means placed at the run's total env steps."""

import json
from pathlib import Path

import pytest

from synthetic_runs import write_events

from sacscale.analysis.learning import compare_learning, learning_curves
from sacscale.cli import main


def _run(run_dir: Path, ranks: int, lengths_by_rank: list[list[float]], steps_per_log: float):
    for rank in range(ranks):
        scalars = {"Episode/length": [(i + 1, 100.0 + i, v) for i, v in enumerate(lengths_by_rank[rank])],
                   "Episode/return": [(i + 1, 100.0 + i, v / 10) for i, v in enumerate(lengths_by_rank[rank])],
                   "Reward/tracking_lin_vel": [(i + 1, 100.0 + i, v / 1000) for i, v in enumerate(lengths_by_rank[rank])]}
        if rank == 0:
            n = len(lengths_by_rank[0])
            scalars["Perf/total_env_steps"] = [(i + 1, 100.0 + i, (i + 1) * steps_per_log) for i in range(n)]
        write_events(run_dir / "tb" / f"rank{rank}", scalars)
    return run_dir


def test_two_rank_curve_is_the_rank_mean_at_total_env_steps(tmp_path):
    run = _run(tmp_path / "n2", 2, [[10, 20, 30], [30, 40, 50]], steps_per_log=128)
    curves = learning_curves(run)
    assert curves["length"]["env_steps"] == [128, 256, 384]
    assert curves["length"]["value"] == [20, 30, 40]
    assert curves["return"]["value"] == [2, 3, 4]
    assert curves["tracking_lin_vel"]["value"] == pytest.approx([0.02, 0.03, 0.04])  # float32 events
    assert curves["tracking_ang_vel"] == {"env_steps": [], "value": []}  # never logged


def test_compare_and_cli(tmp_path):
    a = _run(tmp_path / "a", 1, [[10, 20, 30, 40, 50]], steps_per_log=64)
    b = _run(tmp_path / "b", 2, [[10, 10, 10, 10, 10], [30, 30, 30, 30, 30]], steps_per_log=64)
    result = compare_learning({"a": a, "b": b}, fraction=0.4)
    assert result["runs"]["a"]["tail_mean_length"] == 45  # mean of the last 2 of 5 points
    assert result["runs"]["b"]["tail_mean_length"] == 20
    assert result["runs"]["a"]["env_steps"] == 320
    assert result["runs"]["a"]["first_tracking_lin_vel"] == pytest.approx(0.01)
    assert result["runs"]["a"]["tail_mean_tracking_lin_vel"] == pytest.approx(0.045)
    out, fig = tmp_path / "c.json", tmp_path / "c.png"
    assert main(["compare-learning", f"one={a}", f"two={b}", "--output", str(out), "--figure", str(fig)]) == 0
    assert set(json.loads(out.read_text())["runs"]) == {"one", "two"}
    assert fig.read_bytes()[:4] == b"\x89PNG"
    assert main(["compare-learning", "no-label"]) == 2
    assert main(["compare-learning", f"x={tmp_path / 'missing'}"]) == 1
