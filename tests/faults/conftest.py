import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
# faultkit.py (helpers of these tests), tests/workflow/pipeline_helpers.py (a copy of the
# workflow, Snakemake in it, checks of a finished run set)
# and tests/synthetic_runs.py (synthetic event files)
sys.path[:0] = [str(HERE), str(HERE.parent / "workflow"), str(HERE.parent)]


@pytest.fixture(scope="session")
def g1_mjb(tmp_path_factory):
    """The task model compiled once (the trainer's --model), so each job starts fast."""
    from sacscale.task.g1_model import build_g1_model, save_model

    path = tmp_path_factory.mktemp("model") / "g1_walk_flat.mjb"
    save_model(build_g1_model(), path)
    return path


@pytest.fixture
def jobs():
    """Jobs started by a test; whatever is still alive at teardown is killed."""
    started = []
    yield started
    for job in started:
        job.cleanup()
