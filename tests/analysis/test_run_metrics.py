"""The main figure and the run's other figures, against hand-computed values."""

import json

import pytest

from sacscale.analysis.metrics import MetricError, analyze_run, differences, steady_rate
from synthetic_runs import write_run

# Six rank-0 points (step, wall time, cumulative env steps over all ranks), written out of
# wall-time order to check that the window is taken by step.
TOTAL = [
    (4, 106.0, 100.0),
    (1, 100.0, 10.0),
    (2, 101.0, 30.0),
    (6, 115.0, 210.0),
    (3, 103.0, 60.0),
    (5, 110.0, 150.0),
]
# n = 6, w = events[3:] = steps 4, 5, 6: (210 - 100) / (115 - 106) = 110 / 9
EXPECTED_STEADY = 110.0 / 9.0
FPS = [(s, t, v) for s, t, v in [(1, 100.0, 1.0), (2, 101.0, 2.0), (3, 103.0, 4.0),
                                  (4, 106.0, 8.0), (5, 110.0, 16.0), (6, 115.0, 32.0)]]
# tail mean of Perf/total_fps over its last half (steps 4, 5, 6): (8 + 16 + 32) / 3
EXPECTED_TAIL = 56.0 / 3.0


@pytest.fixture
def run_dir(tmp_path):
    return write_run(
        tmp_path / "repro_r2_n2_pool32",
        TOTAL,
        ranks=2,
        fps=FPS,
        returns=[(2, 101.0, -1.0), (6, 115.0, 3.5)],
        lengths=[(2, 101.0, 5.0), (6, 115.0, 40.0)],
        time_tags={"Time/learner_update_ms": [(s, t, 10.0 * s) for s, t, _ in sorted(TOTAL)]},
        # rank 1's own phases, out of step order like TOTAL
        rank_time_tags={1: {"Time/learner_update_ms": [(s, t, 20.0 * s) for s, t, _ in TOTAL],
                            "Time/collector_env_step_ms": [(s, t, 1.0 * s) for s, t, _ in TOTAL]}},
        run_json={"duration_s": 42.5, "exit_status": 0,
                  "resolved_config": {"config": "n2_pool32", "repeat": 2, "devices": "0,1", "world_size": 2}},
    )


def test_steady_rate_hand_computed(run_dir):
    m = analyze_run(run_dir)
    assert m["steady_env_steps_per_s"] == pytest.approx(EXPECTED_STEADY, rel=1e-12)
    assert m["window"] == {"events": 6, "window_events": 3, "first_step": 4, "last_step": 6,
                           "env_steps": 110.0, "seconds": 9.0}


def test_odd_count_window_starts_at_n_over_2():
    from sacscale.analysis.events import Scalar

    events = [Scalar(i, float(t), float(v)) for i, (t, v) in enumerate([(0, 0), (1, 5), (2, 20), (4, 30), (8, 70)])]
    # n = 5, w = events[2:] = (t=2, v=20) .. (t=8, v=70): 50 / 6
    assert steady_rate(events, "x")["steady_env_steps_per_s"] == pytest.approx(50.0 / 6.0)


def test_other_figures(run_dir):
    m = analyze_run(run_dir)
    assert m["tail_mean_total_fps"] == pytest.approx(EXPECTED_TAIL)
    assert m["run"] == "repro_r2_n2_pool32" and m["config"] == "n2_pool32" and m["repeat"] == 2
    assert m["iterations"] == 6
    assert m["total_env_steps"] == 210.0
    assert m["wall_time_s"] == 42.5
    assert m["event_span_s"] == pytest.approx(15.0)
    assert m["final_episode_return"] == 3.5 and m["final_episode_length"] == 40.0
    assert [r["rank"] for r in m["ranks"]] == [0, 1]
    for r in m["ranks"]:  # each rank logs half of the total
        assert r["steady_env_steps_per_s"] == pytest.approx(EXPECTED_STEADY / 2)
    assert m["phase_ms"] == {"learner_update_ms": pytest.approx(50.0)}  # mean of 40, 50, 60
    assert len(m["series"]["total_env_steps"]) == 6


def test_phase_ms_of_every_rank(run_dir):
    m = analyze_run(run_dir)
    r0, r1 = m["ranks"]
    assert r0["phase_ms"] == {"learner_update_ms": pytest.approx(50.0)} == m["phase_ms"]
    # steps 4, 5, 6 of rank 1: (80 + 100 + 120) / 3 and (4 + 5 + 6) / 3
    assert r1["phase_ms"] == {"collector_env_step_ms": pytest.approx(5.0), "learner_update_ms": pytest.approx(100.0)}
    assert list(r1["phase_ms"]) == ["collector_env_step_ms", "learner_update_ms"]
    assert "ranks[].phase_ms" in m["definitions"] and "phase_ms" in m["definitions"]


def test_untraced_run_has_empty_phase_ms(tmp_path):
    m = analyze_run(write_run(tmp_path / "p_r1_n2", TOTAL, ranks=2))
    assert m["phase_ms"] == {}
    assert [r["phase_ms"] for r in m["ranks"]] == [{}, {}]



def test_physics_share_over_the_rate_window_and_final_tracking(tmp_path):
    # window: steps 4..6, 9 s, 110 env steps over 2 iterations (our steps are iterations):
    # 4500 ms per iteration; physics at the steps it spans, 5 and 6: (50 + 60) / 2
    run = write_run(tmp_path / "p_r1_n2", TOTAL, ranks=2,
                    time_tags={"Time/collector_physics_ms": [(s, t, 10.0 * s) for s, t, _ in TOTAL],
                               # the last 10% of env steps (>= 189 of 210): step 6 only
                               "Reward/tracking_lin_vel": [(s, t, 0.02 if s == 6 else 0.0) for s, t, _ in TOTAL]})
    m = analyze_run(run)
    assert m["physics"]["physics_ms"] == pytest.approx(55.0)
    assert m["physics"]["iteration_ms"] == pytest.approx(4500.0)
    assert m["physics_share"] == pytest.approx(55.0 / 4500.0)
    assert m["physics"]["source"] == "Time/collector_physics_ms" and m["physics"]["trainer_iteration_ms"] is None
    assert m["final_tracking"] == {"tracking_lin_vel": pytest.approx(0.5), "tracking_ang_vel": None}  # of 2 x 0.02
    # the env count from the run record, where it has one: 50 env steps per iteration
    run_json = {"resolved_config": {"num_envs": 25, "world_size": 2}}
    m = analyze_run(write_run(tmp_path / "p_r2_n2", TOTAL, ranks=2, run_json=run_json,
                              time_tags={"Time/collector_physics_ms": [(s, t, 90.0) for s, t, _ in TOTAL]}))
    assert m["physics"]["iteration_ms"] == pytest.approx(1000 * 9.0 * 50 / 110)
    assert "physics_share" in m["definitions"] and "final_tracking" in m["definitions"]


def test_an_untraced_run_has_no_physics_share(tmp_path):
    m = analyze_run(write_run(tmp_path / "p_r1_n2", TOTAL, ranks=2))
    assert m["physics_share"] is None and m["physics"] is None


def test_too_few_events_is_an_error(tmp_path):
    run = write_run(tmp_path / "p_r1_x", [(1, 1.0, 1.0), (2, 2.0, 2.0)])
    with pytest.raises(MetricError, match="at least 2"):
        analyze_run(run)


def test_no_elapsed_time_is_an_error(tmp_path):
    run = write_run(tmp_path / "p_r1_x", [(1, 5.0, 1.0), (2, 5.0, 2.0), (3, 5.0, 3.0), (4, 5.0, 4.0)])
    with pytest.raises(MetricError, match="no wall time"):
        analyze_run(run)


def test_differences_name_the_figure(run_dir):
    m = analyze_run(run_dir)
    assert differences(m, analyze_run(run_dir)) == []
    changed = json.loads(json.dumps(m))
    changed["steady_env_steps_per_s"] *= 1.01
    assert [d.split(":")[0] for d in differences(changed, m)] == ["steady_env_steps_per_s"]


def test_cli_writes_json(run_dir, tmp_path, sacscale_main):
    out = tmp_path / "out" / "metrics.json"
    proc = sacscale_main("analyze-run", str(run_dir), "--output", str(out))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(out.read_text())["steady_env_steps_per_s"] == pytest.approx(EXPECTED_STEADY)


def test_cli_fails_naming_the_file(run_dir, tmp_path, sacscale_main):
    victim = next((run_dir / "tb" / "rank0").glob("events.out.tfevents.*"))
    victim.write_bytes(b"")
    out = tmp_path / "metrics.json"
    proc = sacscale_main("analyze-run", str(run_dir), "--output", str(out))
    assert proc.returncode == 1
    assert str(victim) in proc.stderr and "empty" in proc.stderr
    assert not out.exists()


def test_cli_fails_on_missing_run(tmp_path, sacscale_main):
    proc = sacscale_main("analyze-run", str(tmp_path / "nope"), "--output", str(tmp_path / "m.json"))
    assert proc.returncode == 1 and "nope" in proc.stderr


def test_two_event_files_in_one_rank_directory_are_refused(run_dir, tmp_path, sacscale_main):
    """Two runs into one --log-dir: the merged rate would be wrong, so
    analyze-run fails naming the directory and both files instead of reporting it."""
    from sacscale.analysis.events import EventFileError
    from synthetic_runs import write_events

    second = write_events(tmp_path / "other", {"Perf/total_env_steps": [(1, 5000.0, 10.0), (2, 5001.0, 20.0)]})
    rank1 = run_dir / "tb" / "rank1"
    target = rank1 / f"{second.name}.second"
    second.rename(target)
    with pytest.raises(EventFileError, match=rf"{rank1}: 2 event files for rank 1 .*{target.name}"):
        analyze_run(run_dir)
    out = tmp_path / "metrics.json"
    proc = sacscale_main("analyze-run", str(run_dir), "--output", str(out))
    assert proc.returncode == 1 and "one run per directory is expected" in proc.stderr
    assert not out.exists()


def test_time_to_quality_takes_the_first_trailing_window_mean_over_ranks():
    from sacscale.analysis.events import Scalar
    from sacscale.analysis.metrics import QUALITY_WINDOW, time_to_quality

    assert QUALITY_WINDOW == 5
    steps = list(range(10, 110, 10))  # 10 log points, 100 env steps per iteration in all
    total = [Scalar(it, 1000.0 + it, 100.0 * it) for it in steps]
    # rank 0 alone reaches 950 at the 3rd point; rank 1 lags, so the mean over ranks reaches
    # 950 from the 5th point on, and the 5-point trailing mean only at the 8th (it 80)
    r0 = [Scalar(it, 0.0, v) for it, v in zip(steps, [900, 940, 960, 960, 980, 980, 980, 980, 980, 980])]
    r1 = [Scalar(it, 0.0, v) for it, v in zip(steps, [800, 850, 880, 900, 920, 940, 950, 960, 980, 980])]
    # yaw tracking at 0.6 of its maximum (0.03 per step) on both ranks: never 0.65
    yaw = [Scalar(it, 0.0, 0.018) for it in steps]
    per_rank = {0: {"Perf/total_env_steps": total, "Episode/length": r0, "Reward/tracking_ang_vel": yaw},
                1: {"Episode/length": r1, "Reward/tracking_ang_vel": yaw}}
    got = time_to_quality(per_rank, start_time=990.0)
    means = [(a.value + b.value) / 2 for a, b in zip(r0, r1)]
    first = next(i for i in range(4, 10) if sum(means[i - 4:i + 1]) / 5 >= 950)
    assert got["episode_length"] == {"threshold": 950.0, "iteration": steps[first], "env_steps": 100.0 * steps[first],
                                     "seconds": 10.0 + steps[first]}
    assert steps[first] == 80
    assert got["normalised_tracking_ang_vel"] is None
    assert got["normalised_tracking_lin_vel"] is None  # never logged


@pytest.mark.parametrize("record", ["run.json", "train_meta.json"])
def test_a_folder_at_a_records_name_is_named_not_taken_for_no_record(run_dir, record):
    """A folder at run.json's name was analysed as a run without one, and exit 0."""
    from sacscale.analysis.events import EventFileError

    (run_dir / record).unlink(missing_ok=True)
    (run_dir / record).mkdir()
    with pytest.raises(EventFileError, match=rf"{record}: a folder, not the record the trainer or the run wrapper"):
        analyze_run(run_dir)
