"""`sacscale report` into a folder another user can write to. Before: the report and its
figures were written into a folder open to all without the sticky bit, or one of another
user's, where that user could swap a page or a figure for their own. Now it is refused in
one line naming the folder, exit 2, nothing written."""

import os
import shutil
from pathlib import Path

import pytest

from cli_runs import REPO, SET, one_line, sacscale

RESULTS = REPO / "results" / SET


@pytest.fixture
def finished_set(tmp_path):
    shutil.copytree(RESULTS, tmp_path / "repo" / "results" / SET)
    (tmp_path / "repo" / "reports").mkdir()
    return tmp_path / "repo" / "results" / SET


def _folder(path: Path, mode: int) -> Path:
    path.mkdir(parents=True)
    path.chmod(mode)
    return path


def test_an_output_folder_open_to_all_is_refused(tmp_path, finished_set):
    out = _folder(tmp_path / "open", 0o777)
    done = sacscale("report", "--run-set", finished_set, "--output-dir", out)
    one_line(done, f"sacscale report: {out}: is writable by other users without the sticky bit (mode 0777), who "
                   "could replace the report's files there; write the report into a folder of your own")
    assert list(out.iterdir()) == []


def test_a_figures_folder_open_to_all_is_refused(tmp_path, finished_set):
    out = _folder(tmp_path / "mine", 0o755)
    figures = _folder(out / "figures", 0o777)
    done = sacscale("report", "--run-set", finished_set, "--output-dir", out)
    one_line(done, f"sacscale report: {figures}: is writable by other users without the sticky bit")
    assert sorted(p.name for p in out.iterdir()) == ["figures"] and list(figures.iterdir()) == []


def test_a_folder_to_be_made_in_one_open_to_all_is_refused(tmp_path, finished_set):
    shared = _folder(tmp_path / "open", 0o777)
    done = sacscale("report", "--run-set", finished_set, "--output-dir", shared / "new")
    one_line(done, f"sacscale report: {shared} (where {shared / 'new'} would be made): is writable by other users")
    assert list(shared.iterdir()) == []


def test_the_named_outputs_folder_is_checked_too(tmp_path):
    out = _folder(tmp_path / "open", 0o777)
    metrics = sorted((RESULTS / "metrics").glob("*.json"))
    done = sacscale("report", "--summary", RESULTS / "summary.json", "--metrics", *metrics, "--output-md",
                    out / "report.md", "--output-html", out / "report.html", "--figures-dir", out / "figures")
    one_line(done, f"sacscale report: {out}: is writable by other users without the sticky bit")
    assert list(out.iterdir()) == []


@pytest.mark.skipif(os.getuid() != 0, reason="giving a folder to another user needs root")
def test_another_users_folder_is_refused(tmp_path, finished_set):
    out = _folder(tmp_path / "theirs", 0o755)
    os.chown(out, 1001, 1001)
    done = sacscale("report", "--run-set", finished_set, "--output-dir", out)
    one_line(done, f"sacscale report: {out}: belongs to uid 1001, another user, who could replace the report's files")
    assert list(out.iterdir()) == []


def test_a_sticky_folder_open_to_all_takes_a_folder_of_ours(tmp_path, finished_set):
    """As /tmp: no other user can remove or rename what we make there."""
    shared = _folder(tmp_path / "tmp", 0o1777)
    done = sacscale("report", "--run-set", finished_set, "--output-dir", shared / "mine")
    assert done.returncode == 0, done.stderr
    assert (shared / "mine" / "report.html").is_file()
