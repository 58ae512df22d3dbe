"""A NaN wall time in a run's events: the every-scalar window check named an infinite time
but let NaN pass (every comparison with NaN is false), and verify passed the set."""

import math
from pathlib import Path

from event_times import event_file, retimed
from set_copies import copy_committed_set, remake_manifest

from sacscale.analysis.events import Scalar
from sacscale.evidence.log_cadence import sitting_problems
from sacscale.evidence.verify import verify

SET = "h200x1_shared_short"
RUN = "shared_r1_n1_pool7"


def test_a_nan_wall_time_outside_the_measured_window_is_named_by_verify(tmp_path):
    root = copy_committed_set(tmp_path, SET)
    path = event_file(root / "runs" / RUN)
    retimed(path, lambda step, wall_time: math.nan if step == 50 else wall_time)
    remake_manifest(root)
    problems = verify(root).metrics
    assert f"{RUN}: cannot recompute: {path}: step 50 Perf/rank_env_steps: wall time nan" in problems, problems


def test_the_window_check_names_a_nan_time_as_it_names_an_infinite_one():
    series = {"Perf/rank_env_steps": [Scalar(10, 100.0, 1.0), Scalar(20, math.nan, 2.0), Scalar(30, 102.0, 3.0)]}
    meta = {"start_time": 99.0, "end_time": 103.0, "config": {"log_every": 10}}
    files = {0: [(Path("tb/rank0/events.out.tfevents.1.vm.1.0"), series)]}
    problems = sitting_problems("r", meta, {}, files)
    assert problems == ["r: tb/rank0 events log Perf/rank_env_steps at step 20 at wall time nan, which no "
                        "sitting's window holds"], problems
