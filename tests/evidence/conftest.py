import sys
from pathlib import Path

# tests/synthetic_runs.py: synthetic event files shared by the pipeline's tests
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import shutil  # noqa: E402

import pytest  # noqa: E402

from set_copies import current_copy  # noqa: E402

CURRENT_SET = "h200x1_shared_short"


@pytest.fixture(scope="module")
def current(tmp_path_factory):
    """A current-format copy of the committed set, one per test module."""
    return current_copy(tmp_path_factory.mktemp("current"), CURRENT_SET)


@pytest.fixture
def work(current, tmp_path):
    """A copy of `current`'s checkout of the test's own, to edit; its results folder."""
    shutil.copytree(current.parent.parent, tmp_path / "repo")
    return tmp_path / "repo" / "results" / CURRENT_SET
