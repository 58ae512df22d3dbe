import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
# tests/synthetic_runs.py (synthetic event files) and pipeline_helpers.py
sys.path[:0] = [str(HERE.parent), str(HERE)]

from pipeline_helpers import copy_workflow  # noqa: E402


@pytest.fixture
def workflow_dir(tmp_path):
    return copy_workflow(tmp_path / "wf")
