"""A compressed event file is read from its decompressing stream, with no decompressed copy
in a temporary folder. Before: `read_event_file` wrote the copy into a scratch folder in
TMPDIR, where, TMPDIR being another user's, that user could swap the folder and put a
symbolic link at the copy's name: root's `analyze-run` replaced the file the link pointed
to with the decompressed events. Now nothing is written there, whatever TMPDIR is."""

import os
import subprocess
import sys
import tempfile

from sacscale.analysis.events import compress_event_files, read_event_dir
from synthetic_runs import linear_points, write_run


def _compressed_run(tmp_path):
    run = write_run(tmp_path / "p_r1_n1", linear_points(50, 4.0, 1.0), ranks=2)
    for rank_dir in sorted((run / "tb").iterdir()):
        compress_event_files(rank_dir)
    return run


def test_a_compressed_file_is_read_without_a_temporary_file(tmp_path, monkeypatch):
    run = _compressed_run(tmp_path)
    plain = {rank: read_event_dir(run / "tb" / rank) for rank in ("rank0", "rank1")}

    def refused(*args, **kwargs):
        raise AssertionError("a temporary file or folder was made")
    for name in ("TemporaryDirectory", "mkdtemp", "mkstemp", "NamedTemporaryFile", "TemporaryFile"):
        monkeypatch.setattr(tempfile, name, refused)
    assert {rank: read_event_dir(run / "tb" / rank) for rank in ("rank0", "rank1")} == plain
    assert len(plain["rank0"]["Perf/total_env_steps"]) == 50


def test_analyze_run_of_compressed_events_writes_nothing_in_an_open_tmpdir(tmp_path):
    run = _compressed_run(tmp_path)
    open_folder = tmp_path / "open"
    open_folder.mkdir()
    open_folder.chmod(0o777)
    out = tmp_path / "metrics.json"
    done = subprocess.run([sys.executable, "-m", "sacscale.cli", "analyze-run", str(run), "--output", str(out)],
                          capture_output=True, text=True, timeout=120, env=os.environ | {"TMPDIR": str(open_folder)})
    assert done.returncode == 0, done.stderr
    assert out.is_file() and list(open_folder.iterdir()) == []
