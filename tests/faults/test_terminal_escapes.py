"""Names from the file system reaching the terminal (docs/faults.md row 28): `sacscale
verify` printed a set's folder name and the names of the files it found as they were, so a
folder or file named with terminal escape sequences (ESC ] 0 ; title BEL, ESC [ 2 J) set
the terminal's title or cleared the screen of whoever verified the set. Every command's
output now shows control characters escaped (tab, newline and carriage return pass)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SET = "h200x1_shared_short"


def test_escape_sequences_in_names_reach_the_terminal_escaped(tmp_path):
    top = tmp_path / "x\x1b]0;pwned\x07"
    for sub in ("results", "reports"):
        shutil.copytree(REPO / sub / SET, top / sub / SET)
    root = top / "results" / SET
    (root / "\x1b[2Jclear").write_text("x")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-m", "sacscale.cli", "verify", str(root)], env=env,
                          capture_output=True, timeout=300)
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert b"\x1b" not in out and b"\x07" not in out
    assert b"extra: \\x1b[2Jclear (not in the manifest)" in out
    assert b"x\\x1b]0;pwned\\x07/results" in out


def test_the_status_summary_names_a_set_folder_with_its_escapes_escaped(tmp_path):
    root = tmp_path / "repo"
    (root / "workflow").mkdir(parents=True)
    shutil.copy(REPO / "workflow" / "presets.yaml", root / "workflow")
    shutil.copy(REPO / "pyproject.toml", root)
    bad = root / "results" / "s\x1b]0;pwned\x07"
    shutil.copytree(REPO / "results" / SET, bad)
    (bad / "environment.json").write_text('{"torch": "2.11", "gpus": "not a list"}')
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-m", "sacscale.evidence.status", "--root", str(root)], env=env,
                          capture_output=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert b"\x1b" not in done.stderr and b"results/s\\x1b]0;pwned\\x07: " in done.stderr, done.stderr


def test_a_run_folder_whose_name_is_not_utf8_is_named_not_a_traceback(tmp_path):
    """TensorBoard's reader encodes the path as UTF-8: a run folder named with the byte 0xff
    ended analyze-run and compare-learning in a UnicodeEncodeError, exit 1 as unexpected. The
    records name it, so it is refused at the start with the cure, its byte shown as written."""
    run = os.path.join(os.fsencode(tmp_path), b"x_r1_n1\xff")
    shutil.copytree(REPO / "results" / SET / "runs" / "shared_r1_n1_pool7", os.fsdecode(run))
    for argv in (["analyze-run", os.fsdecode(run), "--output", str(tmp_path / "m.json")],
                 ["compare-learning", "a=" + os.fsdecode(run), "--output", str(tmp_path / "c.json"),
                  "--figure", str(tmp_path / "c.png")]):
        done = subprocess.run([sys.executable, "-m", "sacscale.cli", *argv], capture_output=True, timeout=120)
        err = done.stderr.decode("utf-8")
        assert done.returncode == 2 and "unexpected" not in err and len(err.splitlines()) == 1, err
        assert "x_r1_n1\\xff' is not valid UTF-8" in err and err.rstrip().endswith("rename it"), err


def test_a_name_that_is_not_utf8_reaches_the_terminal_escaped():
    import io
    from sacscale.cli import _Inert
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="utf-8", errors="strict")
    _Inert(stream).write("extra: a\udcff\x1b[2J\n")
    stream.flush()
    assert raw.getvalue() == b"extra: a\\xff\\x1b[2J\n"
