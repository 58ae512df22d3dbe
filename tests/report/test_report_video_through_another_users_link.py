"""`report --video` reached through another user's folder link in a shared folder such as
/tmp was read and copied into the report (that user chose which WebP root's report carries):
refused in one line naming the link, as the set's other inputs are, nothing written."""

import os
import shutil
from pathlib import Path

import pytest

from cli_runs import other_users_link
from sacscale.cli import main

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "results" / "h200x1_shared_short"
FIGURES = REPO / "reports" / "h200x1_shared_short" / "figures"

pytestmark = pytest.mark.skipif(os.getuid() != 0, reason="giving a link to another user needs root")


def test_a_video_through_another_users_folder_link_is_refused(capsys, tmp_path):
    ours = tmp_path / "p64"
    ours.mkdir()
    shutil.copy(FIGURES / "best_run.webp", ours / "plain.webp")
    shutil.copy(FIGURES / "best_run.json", ours / "best_run.json")
    shutil.copy(RESULTS / "summary.json", tmp_path / "s.json")
    link = other_users_link(tmp_path / "shared" / "eve", ours)
    out = tmp_path / "rep"
    code = main([str(a) for a in ("report", "--summary", tmp_path / "s.json",
                                  "--metrics", *sorted((RESULTS / "metrics").glob("*.json")),
                                  "--output-md", out / "report.md", "--output-html", out / "report.html",
                                  "--figures-dir", out / "figures", "--video", link / "plain.webp",
                                  "--video-record", ours / "best_run.json")])
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"--video {link / 'plain.webp'}: {link}: another user's symbolic link (uid 1001); an input is never " \
           "read through one" in err and len(err.strip().splitlines()) == 1, err
    assert not out.exists()
