"""`report --video` takes the best run's WebP (an older set's GIF) only: `--video
/etc/passwd` was ignored, exit 0; it is refused in one line, nothing written."""

import shutil
from pathlib import Path

import pytest

from sacscale.cli import main

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "results" / "h200x1_shared_short"


@pytest.mark.parametrize("name, content, why", [
    ("passwd", b"root:x:0:0::/root:/bin/sh\n", "not a WebP or GIF file"),
    ("best_run.webp", b"GIF89a not a webp", "named .webp but not a WEBP file"),
    ("best_run.gif", b"RIFF\0\0\0\0WEBPVP8 ", "named .gif but not a GIF file"),
])
def test_a_video_that_is_no_video_is_refused(capsys, tmp_path, name, content, why):
    video = tmp_path / name
    video.write_bytes(content)
    shutil.copy(RESULTS / "summary.json", tmp_path / "s.json")
    code = main([str(a) for a in ("report", "--summary", tmp_path / "s.json",
                                  "--metrics", *sorted((RESULTS / "metrics").glob("*.json")),
                                  "--output-md", tmp_path / "rep" / "report.md",
                                  "--output-html", tmp_path / "rep" / "report.html",
                                  "--figures-dir", tmp_path / "rep" / "figures", "--video", video)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and f"--video {video}: {why}" in err and "\n" not in err
    assert not (tmp_path / "rep").exists()
