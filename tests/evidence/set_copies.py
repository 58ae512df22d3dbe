"""A committed run set copied into a temporary tree of the repository's layout (results/S
and reports/S side by side), for tests that change a set and verify it."""

import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def copy_committed_set(tmp_path: Path, name: str) -> Path:
    """results/NAME and reports/NAME under tmp_path/repo; returns the copy's results/NAME."""
    for sub in ("results", "reports"):
        shutil.copytree(REPO / sub / name, tmp_path / "repo" / sub / name)
    return tmp_path / "repo" / "results" / name


def report_file(root: Path, name: str) -> Path:
    """reports/S/NAME beside results/S."""
    return root.parent.parent / "reports" / root.name / name


def edit_text(path: Path, old: str, new: str) -> None:
    """Replace the first `old` in the file; the test fails if it is not there."""
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))
