"""A reference-trainer run's events replaced by another reference run's (every wall time moved
into its own window, its file name kept): the copy checks read the reference's own layout
(sacscale.evidence.reference_copies), so the copy is named like a copy of this trainer's events.
Before, such a run was never compared, and every figure of the ours-vs-reference page moved."""

import json
import shutil

from event_times import retimed
from set_copies import REPO, copy_committed_set, remake_manifest

from sacscale.analysis.events import read_event_file
from sacscale.analysis.metrics import analyze_run
from sacscale.evidence.copied_events import copied_run_problems
from sacscale.evidence.reference_copies import any_run_values
from sacscale.evidence.verify import verify

SET = "h200x1_ref"


def _event_file(run):
    (found,) = sorted((run / "ref_logs" / "G1WalkFlat").glob("*_mujoco/events.out.tfevents.*"))
    return found


def _first_wall_time(path) -> float:
    return min(s.wall_time for series in read_event_file(path).values() for s in series)


def test_another_reference_runs_events_moved_into_a_runs_window_are_named(tmp_path):
    root = copy_committed_set(tmp_path, SET)
    mine, other = (_event_file(root / "runs" / name) for name in ("pair_r1_ref_n1", "pair_r2_ref_n1"))
    shift = _first_wall_time(mine) - _first_wall_time(other)
    shutil.copyfile(other, mine)
    retimed(mine, lambda step, wall_time: wall_time + shift)
    metrics = root / "metrics" / "pair_r1_ref_n1.json"
    metrics.write_text(json.dumps(analyze_run(root / "runs" / "pair_r1_ref_n1"), indent=1))
    remake_manifest(root)
    said = [p for p in verify(root).problems() if "share most measured values" in p]
    assert said and said[0].startswith("record: pair_r2_ref_n1: runs/pair_r1_ref_n1 ref_logs and runs/pair_r2_ref_n1 "
                                       "ref_logs share most measured values of a tag"), said


def test_the_committed_reference_sets_hold_no_copy():
    """Every pair of runs, reference and ours, of the sets that hold reference runs."""
    for name in (SET, "h200x1_ref_learning"):
        runs = sorted((REPO / "results" / name / "runs").iterdir())
        by_run = {run.name: any_run_values(run, json.loads((run / "train_meta.json").read_text()).get("config"))
                  for run in runs}
        assert sum(1 for values in by_run.values() if values) == len(runs)
        assert copied_run_problems(by_run) == [], name
