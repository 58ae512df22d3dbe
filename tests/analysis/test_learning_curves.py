"""Learning curves per env step: rank means placed at the run's total env steps."""

import json
from pathlib import Path

import pytest

from synthetic_runs import write_events

from sacscale.analysis.learning import compare_learning, curves_by_config, learning_curves, mean_curve, run_config
from sacscale.cli import main


def _run(run_dir: Path, ranks: int, lengths_by_rank: list[list[float | None]], steps_per_log: float):
    """A run of ours; a length of None: no scalar at that point (no episode ended there: the
    trainer leaves the NaN mean unwritten)."""
    for rank in range(ranks):
        logged = [(i, v) for i, v in enumerate(lengths_by_rank[rank]) if v is not None]
        scalars = {"Episode/length": [(i + 1, 100.0 + i, v) for i, v in logged],
                   "Episode/return": [(i + 1, 100.0 + i, v / 10) for i, v in logged],
                   "Reward/tracking_lin_vel": [(i + 1, 100.0 + i, v / 1000) for i, v in logged]}
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
    assert main(["compare-learning", f"x={tmp_path / 'missing'}"]) == 2


def test_mean_curve_on_the_common_env_steps():
    a = {"env_steps": [100.0, 200.0, 300.0, 400.0], "value": [1.0, 2.0, 3.0, 4.0]}
    b = {"env_steps": [100.0, 200.0, 300.0], "value": [3.0, 4.0, 5.0]}
    mean = mean_curve([a, b, {"env_steps": [], "value": []}])  # the empty curve is left out
    assert mean == {"env_steps": [100.0, 200.0, 300.0], "value": [2.0, 3.0, 4.0], "runs": 2}
    # a run logged at other env steps is interpolated onto the grid; the grid is the union
    # of both runs' points inside the range both cover (150 .. 350; a's 100 and 400 fall outside)
    c = {"env_steps": [150.0, 250.0, 350.0], "value": [10.0, 20.0, 30.0]}
    mean = mean_curve([a, c])
    assert mean["env_steps"] == [150.0, 200.0, 250.0, 300.0, 350.0]
    assert mean["value"] == pytest.approx([(1.5 + 10) / 2, (2 + 15) / 2, (2.5 + 20) / 2, (3 + 25) / 2,
                                           (3.5 + 30) / 2])
    # non-finite points (a rank that finished no episode) are dropped, not averaged
    d = {"env_steps": [100.0, 200.0, 300.0], "value": [float("nan"), 6.0, 7.0]}
    assert mean_curve([b, d]) == {"env_steps": [200.0, 300.0], "value": [5.0, 6.0], "runs": 2}
    assert mean_curve([]) == {"env_steps": [], "value": [], "runs": 0}
    disjoint = mean_curve([{"env_steps": [1.0, 2.0], "value": [0.0, 0.0]},
                           {"env_steps": [3.0, 4.0], "value": [1.0, 1.0]}])
    assert disjoint == {"env_steps": [], "value": [], "runs": 2}


def test_curves_by_config_groups_repeats_and_averages_them(tmp_path):
    dirs = [_run(tmp_path / "p_r1_n1", 1, [[10, 20, 30]], steps_per_log=64),
            _run(tmp_path / "p_r1_n2", 2, [[10, 20, 30], [30, 40, 50]], steps_per_log=128),
            _run(tmp_path / "p_r2_n1", 1, [[30, 40, 50]], steps_per_log=64),
            _run(tmp_path / "p_r2_n2", 2, [[50, 60, 70], [70, 80, 90]], steps_per_log=128)]
    groups = curves_by_config(dirs, {"p_r1_n1": "one", "p_r2_n1": "one"})  # n2: from the directory name
    assert list(groups) == ["one", "n2"]
    assert list(groups["one"]["runs"]) == ["p_r1_n1", "p_r2_n1"]
    one, two = groups["one"]["mean"], groups["n2"]["mean"]
    assert one["length"] == {"env_steps": [64, 128, 192], "value": [20, 30, 40], "runs": 2}
    assert two["length"] == {"env_steps": [128, 256, 384], "value": [40, 50, 60], "runs": 2}  # ranks, then repeats
    assert two["return"]["value"] == pytest.approx([4, 5, 6])
    assert two["tracking_lin_vel"]["value"] == pytest.approx([0.04, 0.05, 0.06])
    assert one["tracking_ang_vel"] == {"env_steps": [], "value": [], "runs": 0}  # never logged
    assert run_config(tmp_path / "elsewhere") == "elsewhere"


def test_a_rank_without_a_value_does_not_blank_the_point(tmp_path):
    run = _run(tmp_path / "n2", 2, [[10, 20, 30], [30, None, 50]], steps_per_log=128)
    assert learning_curves(run)["length"]["value"] == [20, 20, 40]


def test_normalised_tracking_is_the_last_tenth_over_the_maximum_next_to_standing_still(tmp_path):
    # 20 log points: lin-vel tracking (v / 1000) 0.001 .. 0.020; the last 10% are 0.019 and 0.020
    run = _run(tmp_path / "r", 1, [[float(v) for v in range(1, 21)]], steps_per_log=64)
    result = compare_learning({"r": run})
    entry = result["runs"]["r"]
    assert entry["normalised_tracking_lin_vel"] == pytest.approx(0.0195 / 0.04, rel=1e-5)
    assert entry["normalised_tracking_ang_vel"] != entry["normalised_tracking_ang_vel"]  # never logged: NaN
    still = result["stand_still"]
    assert entry["stand_still_normalised_tracking_lin_vel"] == pytest.approx(still["tracking_lin_vel"] / 0.04)
    assert 0.3 < still["tracking_lin_vel"] / 0.04 < 0.6 and 0.4 < still["tracking_ang_vel"] / 0.03 < 0.7


def test_runs_side_by_side_at_equal_env_steps(tmp_path, capsys):
    from sacscale.analysis.learning import at_env_steps

    # a logs every 64 env steps, b every 128: at 256 +- 64, a has points 192, 256, 320 and b
    # has 128 (out), 256, 384 (out)
    a = _run(tmp_path / "a", 1, [[float(v) for v in range(1, 11)]], steps_per_log=64)
    b = _run(tmp_path / "b", 1, [[10.0 * v for v in range(1, 6)]], steps_per_log=128)
    result = compare_learning({"a": a, "b": b})
    (row, far) = at_env_steps(result, [256, 10_000], half_width=64)
    assert row["runs"]["a"]["length"] == pytest.approx(4.0)  # mean of 3, 4, 5
    assert row["runs"]["b"]["length"] == pytest.approx(20.0)
    assert row["runs"]["a"]["tracking_lin_vel"] == pytest.approx(0.004 / 0.04, rel=1e-5)  # normalised
    assert far["runs"]["a"]["length"] != far["runs"]["a"]["length"]  # no point there: NaN
    out = tmp_path / "c.json"
    assert main(["compare-learning", f"a={a}", f"b={b}", "--at-env-steps", "256,512", "--half-width", "64",
                 "--output", str(out)]) == 0
    assert [r["env_steps"] for r in json.loads(out.read_text())["at_env_steps"]] == [256, 512]
    assert "256 | 4 / 20 | 0.10 / 0.50" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["compare-learning", f"a={a}", "--at-env-steps", "soon"])


def test_a_run_whose_episodes_never_ended_says_so_with_its_env_steps(tmp_path, capsys):
    ended = _run(tmp_path / "a", 1, [[10, 20, 30]], steps_per_log=64)
    never = _run(tmp_path / "b", 1, [[None, None, None]], steps_per_log=128)
    result = compare_learning({"a": ended, "b": never})
    assert result["runs"]["b"]["env_steps"] == 384  # it stepped, though no episode ended
    assert main(["compare-learning", f"ended={ended}", f"never={never}", "--output", str(tmp_path / "c.json")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert any(line.startswith("           ended:        192 env steps | return") for line in lines), lines
    assert "           never:        384 env steps | no episode ended by its last log point, so no return or " \
           "length to compare" in lines, lines
