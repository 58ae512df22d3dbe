"""A SACSCALE_LOCK_DIR whose name holds a newline, an escape or a bidi override. Before: it
was used as given: the lock folder was made under that name and every message naming it
was split across lines or sent escape sequences to the terminal. Now the folder's name is
refused in one line when it is resolved, exit 2, before anything is made or started."""

import json
import os
import re
import subprocess
import sys

import pytest

from sacscale.locks import LockSettingError, lock_dir


@pytest.mark.parametrize("name, shown", [("a\nb", "'\\n'"), ("a\x1b[2Jb", "'\\x1b'"), ("a\u202eb", "'\\u202e'")])
def test_a_name_with_a_control_or_invisible_character_is_refused(monkeypatch, tmp_path, name, shown):
    monkeypatch.setenv("SACSCALE_LOCK_DIR", str(tmp_path / name))
    says = f"holds a control or invisible character ({shown}); give a folder whose name is plain text"
    with pytest.raises(LockSettingError, match=re.escape(says)):
        lock_dir()


def _one_line_and_nothing_made(done, tmp_path):
    assert done.returncode == 2, done.stderr
    assert len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr, done.stderr
    assert "SACSCALE_LOCK_DIR='" in done.stderr and "\\n" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["base"]


def test_the_run_wrapper_refuses_it_before_anything_is_moved(tmp_path):
    (tmp_path / "base").mkdir()
    run_dir = tmp_path / "results" / "B" / "runs" / "q_r1_n1"
    cmd = [sys.executable, "-m", "sacscale.cli", "record-run", "--run-dir", str(run_dir),
           "--work-dir", str(run_dir.parent / ".q_r1_n1.partial"), "--attic", str(tmp_path / "logs"),
           "--resolved-json", json.dumps({"run": "q_r1_n1", "run_set": "B", "seed": 1}), "--timeout", "60",
           "--machine-lock", "--", sys.executable, "-c", "pass"]
    env = {**os.environ, "SACSCALE_LOCK_DIR": str(tmp_path / "base" / "locks\nx")}
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
    _one_line_and_nothing_made(done, tmp_path)
    assert done.stderr.startswith("sacscale record-run: run q_r1_n1 not started: SACSCALE_LOCK_DIR="), done.stderr
    assert list((tmp_path / "base").iterdir()) == []


def test_a_compiled_training_run_refuses_it_before_any_rank_starts(tmp_path):
    """The compiled losses' cache lies in the lock folder; each rank would resolve it."""
    (tmp_path / "base").mkdir()
    env = {**os.environ, "SACSCALE_LOCK_DIR": str(tmp_path / "base" / "locks\nx")}
    cmd = [sys.executable, "-m", "sacscale.cli", "train", "--devices", "0", "--log-dir", str(tmp_path / "run"),
           "--iterations", "1", "--num-envs", "16", "--batch-size", "64"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
    _one_line_and_nothing_made(done, tmp_path)
    assert done.stderr.startswith("sacscale train: error: SACSCALE_LOCK_DIR="), done.stderr
