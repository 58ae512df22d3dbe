"""A report killed by SIGKILL leaves its staging folder (`.<name>.report-XXXXXXXX`) beside
the report's folder, and no later report removed it: they piled up in reports/. Under the
folder's lock no other report stages for it, so the next report removes every such folder
of this user's own that holds the staging marker of a report no longer running, and says so
in one line; a link, another user's folder, another report folder's staging, and a folder
without the marker (the user's own of a like name, a finished report) are left alone."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_runs import sacscale
from paused_runs import lock_held_elsewhere

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "evidence"))
from set_copies import copy_committed_set  # noqa: E402

from sacscale.commands._report_output import STAGING_MARKER  # noqa: E402

SET = "h200x1_shared_short"


def _dead_pid() -> int:
    finished = subprocess.Popen([sys.executable, "-c", "pass"])
    finished.wait()
    return finished.pid


def left_behind(parent: Path, name: str, pid: int | None = None) -> Path:
    """A staging folder as a killed report leaves it: its marker, figures drawn, 0700."""
    folder = parent / name
    (folder / "figures").mkdir(parents=True)
    (folder / "figures" / "scaling_bars.png").write_bytes(b"half a report")
    (folder / STAGING_MARKER).write_text(f"{_dead_pid() if pid is None else pid}\n")
    folder.chmod(0o700)
    return folder


def test_a_killed_reports_staging_folder_is_removed_by_the_next(tmp_path):
    root = copy_committed_set(tmp_path, SET)
    out = tmp_path / "out" / "rep"
    out.mkdir(parents=True)
    left_behind(out.parent, ".rep.report-igf1d0cw")
    left_behind(out.parent, ".rep.report-a_b9z0qq")
    kept = [left_behind(out.parent, name) for name in (".rep2.report-igf1d0cw", ".rep.report-short")]
    target = left_behind(tmp_path, "elsewhere")
    (out.parent / ".rep.report-linkabcd").symlink_to(target)
    done = sacscale("report", "--run-set", root, "--output-dir", out)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        f"sacscale report: removed 2 staging folder(s) left in {out.parent} by earlier reports into rep that were "
        "stopped before they could remove them: .rep.report-a_b9z0qq, .rep.report-igf1d0cw"], done.stderr
    assert sorted(p.name for p in out.parent.iterdir()) == sorted(
        ["rep", ".rep.report-linkabcd", *(p.name for p in kept)])
    assert (target / "figures" / "scaling_bars.png").is_file()


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to give a folder to another user")
def test_another_users_folder_of_that_name_is_left_alone(tmp_path):
    root = copy_committed_set(tmp_path, SET)
    out = tmp_path / "out" / "rep"
    out.mkdir(parents=True)
    theirs = left_behind(out.parent, ".rep.report-theirs00")
    os.chown(theirs, 1001, 1001)
    done = sacscale("report", "--run-set", root, "--output-dir", out)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert (theirs / "figures" / "scaling_bars.png").is_file()


def test_a_folder_of_the_users_own_without_the_marker_is_kept(tmp_path):
    """Before: any folder of this user's named like a staging folder was removed (a notes
    folder, a finished report written into `.x.report-abcdefgh`). Now only one holding the
    marker of a report no longer running is; one whose report still runs is kept too."""
    root = copy_committed_set(tmp_path, SET)
    out = tmp_path / "out" / "results"
    out.mkdir(parents=True)
    notes = out.parent / ".results.report-20261205"
    notes.mkdir()
    (notes / "notes.txt").write_text("notes")
    running = left_behind(out.parent, ".results.report-running", pid=os.getpid())
    done = sacscale("report", "--run-set", root, "--output-dir", out)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert (notes / "notes.txt").read_text() == "notes"
    assert (running / "figures" / "scaling_bars.png").is_file()
    assert not (out / STAGING_MARKER).exists()


def test_a_finished_report_in_a_folder_named_like_staging_is_kept(tmp_path):
    root = copy_committed_set(tmp_path, SET)
    named = tmp_path / "sw" / ".x.report-abcdefgh"
    named.mkdir(parents=True)
    assert sacscale("report", "--run-set", root, "--output-dir", named).returncode == 0
    done = sacscale("report", "--run-set", root, "--output-dir", tmp_path / "sw" / "x")
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert (named / "report.md").is_file() and not (named / STAGING_MARKER).exists()




def test_a_leftover_holding_another_commands_live_lock_is_kept(tmp_path):
    """Before: a killed report's staging folder was removed whole, another command's held lock
    file and output inside it too. Now one holding a live lock is kept; one removed takes the
    lock file the killed report left beside it along."""
    root = copy_committed_set(tmp_path, SET)
    out = tmp_path / "out" / "rep"
    out.mkdir(parents=True)
    busy = left_behind(out.parent, ".rep.report-busy0000")
    gone = left_behind(out.parent, ".rep.report-gone0000")
    (out.parent / f".{gone.name}.lock").write_text("pid 1\n")  # as SIGKILL leaves it: not held
    with lock_held_elsewhere(busy / "sub"):
        done = sacscale("report", "--run-set", root, "--output-dir", out)
        assert (busy / ".sub.lock").is_file() and (busy / "figures" / "scaling_bars.png").is_file()
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        f"sacscale report: removed 1 staging folder(s) left in {out.parent} by earlier reports into rep that were "
        "stopped before they could remove them: .rep.report-gone0000"], done.stderr
    assert sorted(p.name for p in out.parent.iterdir()) == [".rep.report-busy0000", "rep"]
