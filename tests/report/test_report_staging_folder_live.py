"""A report's staging folder (`.<name>.report-XXXXXXXX` beside its folder) is live while the
report is written. Before: only the report's folder was locked, so report B (or any output)
went into A's staging folder, and A then moved every file found there into its finished
report: B's held lock file and half-written staging folder included. Now the report holds
the staging folder's own lock (taken before the folder is made), which every guard of a live
folder finds: B is refused naming A. And A moves only the files it wrote: anything else found
in its staging folder is neither moved nor removed, and said in one line."""

import os
import subprocess
import sys
from pathlib import Path

from cli_runs import one_line, sacscale
from paused_runs import finished, lock_held_elsewhere, started_paused

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "evidence"))
from set_copies import copy_committed_set  # noqa: E402

from sacscale.report.figure_names import FIGURES  # noqa: E402

SET = "h200x1_shared_short"
WRITING = "sacscale.report.build:write_report"  # called once the staging folder is made
OWN = {"report.md", "report.html", "numbers.json", "figures", "figures/best_run.webp", "figures/best_run.json",
       *(f"figures/{name}" for name in FIGURES.values())}  # the video copied in, as into any folder but the set's


def _paused_report(tmp_path: Path) -> tuple[subprocess.Popen, Path, Path]:
    """Report A started and paused with its staging folder made: (its process, its folder,
    the staging folder)."""
    root = copy_committed_set(tmp_path / "a", SET)
    out = tmp_path / "out" / "rep"
    first = started_paused(tmp_path, WRITING, "report", "--run-set", root, "--output-dir", out)
    [staging] = [p for p in out.parent.iterdir() if p.name.startswith(".rep.report-") and p.is_dir()]
    return first, out, staging


def _only_its_own(out: Path) -> None:
    written = {p.relative_to(out).as_posix() for p in out.rglob("*")}
    assert "report.md" in written and written <= OWN, sorted(written - OWN)


def test_outputs_into_a_live_reports_staging_folder_are_refused_naming_it(tmp_path):
    first, out, staging = _paused_report(tmp_path)
    try:
        other = copy_committed_set(tmp_path / "b", SET)
        lock = out.parent / f".{staging.name}.lock"
        holds = f"is or lies inside {staging}, where a sacscale report into {out} is being written (pid {first.pid} " \
                f"holds {lock})"
        report = sacscale("report", "--run-set", other, "--output-dir", staging / "sub")
        one_line(report, f"sacscale report: --output-dir {staging / 'sub'}: {holds}")
        manifest = sacscale("manifest", other, "--output", staging / "m.sha256")
        one_line(manifest, f"--output {staging / 'm.sha256'}: {holds}")
        into_itself = sacscale("report", "--run-set", other, "--output-dir", staging)
        one_line(into_itself, f"sacscale report: {staging}: another report is being written into this folder "
                              f"(pid {first.pid} holds {lock})")
        recorded = sacscale("record-run", "--run-dir", staging, "--work-dir", tmp_path / "w", "--attic",
                            tmp_path / "attic", "--timeout", "60", "--", sys.executable, "-c", "pass")
        assert recorded.returncode == 2 and f"(pid {first.pid})" in recorded.stderr, recorded.stderr  # not set aside
        assert {p.relative_to(staging).as_posix() for p in staging.rglob("*")} <= OWN | {".sacscale-report-staging"}
    finally:
        done = finished(tmp_path, first)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    _only_its_own(out)
    assert sorted(p.name for p in out.parent.iterdir()) == ["rep"]  # no staging folder, no lock left


def test_a_file_another_command_put_in_the_staging_folder_is_neither_moved_nor_removed(tmp_path):
    first, out, staging = _paused_report(tmp_path)
    (staging / "figures").mkdir(exist_ok=True)  # the video's copy may be there already
    (staging / "figures" / "theirs.png").write_bytes(b"not the report's")
    with lock_held_elsewhere(staging / "sub"):
        done = finished(tmp_path, first)
        theirs = {p.relative_to(staging).as_posix() for p in staging.rglob("*")}
        assert theirs == {"figures", "figures/theirs.png", ".sub.lock"}, theirs  # its own moved or removed
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        f"sacscale report: {staging}: left in place: it holds {staging / '.sub.lock'} and 1 more, which another "
        "command wrote there while the report was made (the report moved in only its own files); remove the folder "
        "once that command has ended"], done.stderr
    _only_its_own(out)
    assert not os.path.lexists(out / "figures" / "theirs.png")
