"""Each phase time a traced run logs (`Time/*`, the page's phase table) held to its interval's
own time (sacscale.evidence.phase_bounds): every `Time/learner_update_ms` of a run x100, its
metrics made again, passed verify, and the phase table showed a learner update of 1,157 ms an
iteration in a window whose iterations lasted about 120 ms by the same file's logged rates."""

import json
import math

from event_times import _rewritten, event_file, revalued
from set_copies import REPO, copy_committed_set, remake_manifest

from sacscale.analysis.events import Scalar, read_run_files
from sacscale.analysis.metrics import analyze_run
from sacscale.evidence.phase_bounds import intervals, interval_problems, phase_time_problems
from sacscale.evidence.verify import verify

SET = "h200x1_shared_short"
RUN = "shared_r1_n1_pool7"


def test_a_learner_phase_raised_past_its_interval_is_named(tmp_path):
    root = copy_committed_set(tmp_path, SET)
    run = root / "runs" / RUN
    revalued(event_file(run), "Time/learner_update_ms", lambda step, value: value * 100)
    (root / "metrics" / f"{RUN}.json").write_text(json.dumps(analyze_run(run), indent=1))
    remake_manifest(root)
    records = verify(root).records
    said = [r for r in records if r.startswith(f"{RUN}: tb/rank0 logs Time/learner_update_ms ")]
    assert len(said) == 1, records
    assert said[0].endswith("they are parts of the learner's iteration, so their sum cannot exceed it: the phase "
                            "times are not the ones the trainer measured (and at 29 more interval(s) or phase(s))")


def test_the_committed_traced_runs_fit_their_intervals():
    """Both trainer versions' tags: this one's nine phases, and an older set's seven."""
    runs = [run for name in (SET, "h200x2") for run in sorted((REPO / "results" / name / "runs").iterdir())]
    assert len(runs) == 10
    for run in runs:
        meta = json.loads((run / "train_meta.json").read_text())
        assert phase_time_problems(run.name, meta, read_run_files(run)) == [], run


def _series(rows: dict[int, dict[str, float]], num_envs: int = 100) -> dict[str, list[Scalar]]:
    """Events of a rank logging at rows' steps: {step: {tag: value}} with the rate in env
    steps/s as `fps`; the env step counter num_envs an iteration."""
    out: dict[str, list[Scalar]] = {}
    for step, values in sorted(rows.items()):
        out.setdefault("Perf/rank_env_steps", []).append(Scalar(step, float(step), float(step * num_envs)))
        out.setdefault("Perf/rank_fps", []).append(Scalar(step, float(step), values["fps"]))
        for tag, value in values.items():
            if tag != "fps":
                out.setdefault(f"Time/{tag}", []).append(Scalar(step, float(step), value))
    return out


def test_an_interval_is_num_envs_over_its_logged_rate():
    # 100 envs at 1,000 env steps/s: 100 ms an iteration
    found = intervals(_series({10: {"fps": 1000.0}, 20: {"fps": 500.0}}), 100, 0)
    assert [(i.step, i.iterations, i.ms_per_iteration, i.lead_ms) for i in found] == [
        (10, 10, 100.0, 0.0), (20, 10, 200.0, 1000.0)]


def test_the_learners_phases_are_held_to_their_interval():
    within = {"fps": 1000.0, "learner_wait_ms": 40.0, "learner_h2d_ms": 5.0, "learner_update_ms": 54.9}
    assert interval_problems(intervals(_series({10: within, 20: within}), 100, 0)) == []
    over = {**within, "learner_update_ms": 58.0}  # 103 ms of a 100 ms iteration
    (line,) = interval_problems(intervals(_series({10: within, 20: over}), 100, 0))
    assert line.startswith("logs Time/learner_update_ms 58.000 ms an iteration at step 20 (the learner's phases "
                           "learner_wait, learner_h2d, learner_update: 103.000 ms in all), but the interval ending "
                           "there took 100.000 ms an iteration"), line


def test_the_collector_may_have_begun_its_slots_two_iterations_early():
    """The collector's main-thread phases of an interval's slots may reach back into the two
    iterations before it (the intervals that hold them); the sitting's first interval has none."""
    def collector(ms: float) -> dict:
        return {"fps": 1000.0, "collector_env_step_ms": ms, "collector_action_select_ms": 0.0,
                "collector_replay_write_ms": 0.0, "collector_weight_sync_ms": 0.0}
    # every 2 iterations at 100 ms each: the bound at step 4 is 100 + 200 / 2 = 200 ms (and
    # the sitting's 400 ms so far hold the 2 x 40 + 2 x 160 ms of the collector's work)
    assert interval_problems(intervals(_series({2: collector(40.0), 4: collector(160.0)}), 100, 0)) == []
    (line,) = interval_problems(intervals(_series({2: collector(40.0), 4: collector(210.0)}), 100, 0))
    assert line.startswith("logs the collector's main-thread phases (collector_env_step, collector_action_select, "
                           "collector_replay_write, collector_weight_sync) at 210.000 ms an iteration in all at step "
                           "4, but the interval ending there took 100.000 ms an iteration (num_envs 100 over its "
                           "Perf/rank_fps 1,000.0), 200.000 ms with the 2 iterations before it"), line
    (first,) = interval_problems(intervals(_series({2: collector(110.0)}), 100, 0))
    assert first.startswith("logs the collector's main-thread phases") and "at step 2" in first


def test_the_physics_wait_is_part_of_the_env_step_and_no_time_is_negative():
    row = {"fps": 1000.0, "collector_env_step_ms": 30.0, "collector_physics_wait_ms": 31.0}
    (line,) = interval_problems(intervals(_series({10: row}), 100, 0))
    assert line.startswith("logs Time/collector_physics_wait_ms 31.000 ms at step 10, above its "
                           "Time/collector_env_step_ms 30.000 ms, of which the wait is a part"), line
    (line,) = interval_problems(intervals(_series({10: {"fps": 1000.0, "learner_h2d_ms": -1.0}}), 100, 0))
    assert line.startswith("logs Time/learner_h2d_ms -1.0 at step 10: a time is not negative"), line


def test_an_interval_without_its_rate_bounds_nothing():
    """A missing rate is named by the tag checks; here it only leaves its interval (and the
    collector's lead over the next two) unbounded."""
    rows = _series({10: {"fps": 1000.0, "learner_update_ms": 95.0}, 20: {"fps": 1000.0, "learner_update_ms": 500.0}})
    rows["Perf/rank_fps"] = rows["Perf/rank_fps"][:1]
    found = intervals(rows, 100, 0)
    assert [i.step for i in found] == [10] and interval_problems(found) == []
    assert math.isinf(intervals(_series({10: {"fps": -1.0}, 12: {"fps": 1.0}}), 1, 0)[0].lead_ms)


def _halved_or_doubled(tmp_path, change) -> list[str]:
    root = copy_committed_set(tmp_path, SET)
    run = root / "runs" / RUN
    _rewritten(event_file(run), change)
    (root / "metrics" / f"{RUN}.json").write_text(json.dumps(analyze_run(run), indent=1))
    remake_manifest(root)
    return [r for r in verify(root).records if r.startswith(f"{RUN}: tb/rank0 logs ")]


def test_every_phase_time_halved_is_named(tmp_path):
    """The learner's phases fill its iteration: every `Time/*` x0.5 leaves half of it untimed."""
    def halved(event):
        for value in event.summary.value:
            if value.tag.startswith("Time/"):
                value.simple_value *= 0.5
    (said,) = _halved_or_doubled(tmp_path, halved)
    assert said.startswith(f"{RUN}: tb/rank0 logs the learner's phases (learner_wait, learner_h2d, learner_update) "
                           "at a median 50% of their intervals' time (over 30 intervals, by its Perf/rank_fps), "
                           "but they fill the learner's iteration: a median of at least 60% in every rank file "
                           "measured"), said


def test_the_collectors_env_step_doubled_is_named(tmp_path):
    """Each interval's doubled env step fits the three intervals the collector may reach back
    into, but not the sitting's time so far: its one thread cannot work longer than that."""
    def doubled(event):
        for value in event.summary.value:
            if value.tag == "Time/collector_env_step_ms":
                value.simple_value *= 2
    (said,) = _halved_or_doubled(tmp_path, doubled)
    assert said.startswith(f"{RUN}: tb/rank0 logs the collector's main-thread phases at "), said
    assert "but the sitting took " in said and said.endswith(
        "by its logged rates: one thread cannot work longer than the time it had: the phase times are not the "
        "ones the trainer measured"), said


def test_the_learners_median_share_leaves_out_intervals_that_save():
    short = {"fps": 1000.0, "learner_wait_ms": 10.0}  # 10 of a 100 ms iteration: a save's interval
    full = {"fps": 1000.0, "learner_wait_ms": 95.0}
    rows = _series({2: full, 4: short, 6: full, 8: short})
    assert interval_problems(intervals(rows, 100, 0), checkpoint_every=4) == []
    (line,) = interval_problems(intervals(rows, 100, 0))
    assert "at a median 52% of their intervals' time (over 4 intervals" in line, line


def test_the_collectors_work_is_held_to_the_sittings_time_so_far():
    row = {"fps": 1000.0, "collector_env_step_ms": 150.0}  # within 100 + 200 / 2 ms at step 4, not in all
    (line,) = interval_problems(intervals(_series({2: {"fps": 1000.0, "collector_env_step_ms": 90.0}, 4: row}), 100, 0))
    assert line.startswith("logs the collector's main-thread phases at 480.000 ms in all up to step 4, but the "
                           "sitting took 400.000 ms up to there by its logged rates"), line
