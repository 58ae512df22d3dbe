"""`report --run-set` judges the set's video and its record as the set's other inputs: it
copied `reports/S/figures/best_run.webp` through whatever stood at the name, another user's
link to root's private file (root's secret in root's report, shown as the video) or a
sparse file of 300 MB (written whole on root's disk). Each is refused in one line, nothing
written."""

import os
import sys
from pathlib import Path

import pytest

from cli_runs import one_line, other_users_link, sacscale

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "evidence"))
from set_copies import copy_committed_set  # noqa: E402

SET = "h200x1_shared_short"
WEBP_HEAD = b"RIFF\0\0\0\0WEBPVP8 "


@pytest.fixture
def video(tmp_path) -> tuple[Path, Path]:
    """(the set's results folder, its best_run.webp)."""
    root = copy_committed_set(tmp_path, SET)
    return root, root.parents[1] / "reports" / SET / "figures" / "best_run.webp"


def refused(root: Path, out: Path, says: str) -> None:
    one_line(sacscale("report", "--run-set", root, "--output-dir", out), says)
    assert not out.exists()


def test_a_video_through_another_users_link_is_refused(video, tmp_path):
    if os.getuid() != 0:
        pytest.skip("giving a link to another user needs root")
    root, webp = video
    secret = tmp_path / "secret.webp"
    secret.write_bytes(WEBP_HEAD + b"private key material")
    secret.chmod(0o600)
    webp.unlink()
    other_users_link(webp, secret)
    refused(root, tmp_path / "out", f"{webp}: another user's symbolic link (uid 1001)")


def test_a_video_through_our_own_link_is_not_copied(video, tmp_path):
    root, webp = video
    webp.rename(tmp_path / "elsewhere.webp")
    webp.symlink_to(tmp_path / "elsewhere.webp")
    refused(root, tmp_path / "out", f"{webp}: a symbolic link, where the set keeps the best run's video or its record")


def test_a_sparse_video_past_the_sets_budget_is_refused(video, tmp_path):
    root, webp = video
    with webp.open("wb") as fh:
        fh.write(WEBP_HEAD)
        fh.truncate(300 * 2**20)
    refused(root, tmp_path / "out", f"{webp}: 314,572,800 bytes, more than the set's whole budget of 4,194,304")


def test_a_video_that_is_no_webp_is_refused(video, tmp_path):
    root, webp = video
    webp.write_bytes(b"GIF89a not a webp")
    refused(root, tmp_path / "out", f"{webp}: named .webp but not a WEBP file by its content")
