"""A NaN or infinite wall time in an event file is refused where the events are read: a NaN
at the measured window's first step gave metrics with `steady_env_steps_per_s: null` and
`window.seconds: null` (no comparison catches NaN), which the report then plotted into
matplotlib's `x and y must have same first dimension`, naming no file."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from event_times import event_file, retimed

RUN = Path(__file__).resolve().parents[2] / "results" / "h200x1_shared_short" / "runs" / "shared_r1_n1_pool7"


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_a_non_finite_wall_time_is_refused_naming_file_step_and_tag(tmp_path, bad):
    run = tmp_path / RUN.name
    shutil.copytree(RUN, run)
    path = event_file(run)
    retimed(path, lambda step, wall_time: bad if step == 160 else wall_time)
    done = subprocess.run([sys.executable, "-m", "sacscale", "analyze-run", str(run), "--output",
                           str(tmp_path / "m.json")], capture_output=True, text=True, timeout=300)
    # a run it cannot analyse is exit 1, as for every other event file it refuses
    assert (done.returncode, done.stderr) == (
        1, f"sacscale analyze-run: error: {path}: step 160 Perf/rank_env_steps: wall time {bad}\n")
    assert not (tmp_path / "m.json").exists()
