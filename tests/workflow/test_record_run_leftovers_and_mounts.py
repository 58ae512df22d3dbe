"""What `sacscale record-run` finds at the start, and where its completed run can go. A work
folder on another mount of the run folder's file system (a bind mount: one `st_dev`) passed
the start's file-system check, trained, and then its rename failed (EXDEV): nothing recorded.
Now the completed run moves as the attic's attempts do (a rename, else a copy made whole
beside the run folder), in every layout. A leftover work folder was set aside as
`interrupted` whatever its run.json said, a completed run too; one that could not be moved
was refused in a line saying neither that nothing ran nor what to do. A source the copy
across could not remove was said "moved", and each rerun copied it into the attic again. A
run's name cut to fit the attic read as another run's whole name."""

import errno
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cli_runs import sacscale
from sacscale.pipeline import moves
from sacscale.pipeline.run_folder_names import record_run_form, set_aside_name

TRAINER = ("import sys, pathlib; w = pathlib.Path(sys.argv[1]); w.mkdir(parents=True, exist_ok=True); "
           "(w / 'precious.txt').write_text('work'); code = int(sys.argv[2]); "
           "code or (w / 'tb' / 'rank0').mkdir(parents=True); "
           "code or (w / 'tb' / 'rank0' / 'events.out.tfevents.1.x').write_bytes(b'x'); sys.exit(code)")


def record_run(cwd, code, run_dir="runs/r1", attic="attic"):
    work = "runs/.r1.partial"
    return sacscale("record-run", "--run-dir", run_dir, "--work-dir", work, "--attic", attic, "--timeout", "30",
                    "--", sys.executable, "-c", TRAINER, work, str(code), cwd=cwd)


def leftover(tmp_path: Path, status: str | None) -> Path:
    work = tmp_path / "runs" / ".r1.partial"
    work.mkdir(parents=True)
    (work / "train.log").write_text("an earlier attempt")
    if status is not None:
        (work / "run.json").write_text(json.dumps({"run": "r1", "status": status}))
    return work


@pytest.mark.parametrize("status", ["failed", "timed_out"])
def test_a_leftover_attempt_is_set_aside_as_its_run_json_says(tmp_path, status):
    leftover(tmp_path, status)
    done = record_run(tmp_path, 0)
    assert done.returncode == 0, done.stderr
    [kept] = os.listdir(tmp_path / "attic")
    assert kept.startswith(f"r1.{status}-"), kept


def test_a_leftover_without_run_json_is_set_aside_as_interrupted(tmp_path):
    leftover(tmp_path, None)
    assert record_run(tmp_path, 0).returncode == 0
    [kept] = os.listdir(tmp_path / "attic")
    assert kept.startswith("r1.interrupted-"), kept


def test_a_completed_run_left_in_the_work_folder_is_not_set_aside(tmp_path):
    work = leftover(tmp_path, "completed")
    done = record_run(tmp_path, 0)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == (
        "sacscale record-run: --work-dir runs/.r1.partial: holds a completed run that was never moved into place "
        "(its run.json says completed): move it to runs/r1 yourself, or move it away to record the run again "
        "(nothing was moved or started)")
    assert (work / "train.log").read_text() == "an earlier attempt" and not (work / "precious.txt").exists()
    assert not (tmp_path / "attic").exists() and not (tmp_path / "runs" / "r1").exists()


def test_a_leftover_that_cannot_be_set_aside_refuses_the_run_saying_nothing_ran(tmp_path, other_disk):
    work = leftover(tmp_path, "failed")
    os.mkfifo(work / "fifo")  # no copy across file systems takes a named pipe
    done = record_run(tmp_path, 0, attic=other_disk / "attic")
    assert done.returncode == 1, done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith(f"sacscale record-run: runs/.r1.partial: left by an earlier attempt, cannot be set "
                           f"aside in {other_disk / 'attic'} (")
    assert "named pipe" in line and line.endswith(
        "; nothing was run: remove what stands in the way, or move runs/.r1.partial away yourself, then run again")
    assert not (work / "precious.txt").exists() and os.listdir(other_disk / "attic") == []


def _source_not_removable(monkeypatch, source: Path):
    real = moves.remove

    def remove(path):
        if Path(path) == source:
            raise PermissionError(errno.EPERM, os.strerror(errno.EPERM), str(source / "sub" / "f"))
        return real(path)

    def replace(one, other, real=moves.rename_into_place):  # as across file systems, for the source only
        if Path(one) == source:
            raise OSError(errno.EXDEV, os.strerror(errno.EXDEV), str(one), None, str(other))
        return real(one, other)

    monkeypatch.setattr(moves, "remove", remove)
    monkeypatch.setattr(moves, "rename_into_place", replace)


def test_a_source_the_copy_across_cannot_remove_is_named_and_not_copied_again(tmp_path, monkeypatch):
    from sacscale.pipeline import set_aside

    work = leftover(tmp_path, "failed")
    _source_not_removable(monkeypatch, work)
    said: list[str] = []
    kept = set_aside.move_aside(work, tmp_path / "attic", "failed", said.append)
    assert (kept / "train.log").read_text() == "an earlier attempt"
    assert said == [f"copied {work} to {kept}, but cannot remove it from {work} ({str(work / 'sub' / 'f')!r}: "
                    f"{os.strerror(errno.EPERM)}); what is left there is a copy: remove it yourself"]
    monkeypatch.undo()
    again = set_aside.move_aside(work, tmp_path / "attic", "failed", said.append)
    assert again == kept and os.listdir(tmp_path / "attic") == [kept.name] and not work.exists()
    assert said[-1] == f"removed {work}, what was left of an attempt already kept whole in {kept}"


def test_a_run_name_cut_to_fit_the_attic_is_no_other_runs_name(tmp_path):
    cut = set_aside_name("a" * 240, "failed", tmp_path)
    stem = cut.split(".failed-")[0]
    assert len(os.fsencode(cut)) <= 255 and ".cut-" in stem
    assert record_run_form(stem) is not None  # no planned run may be named so


def _can_bind_mount() -> bool:
    if shutil.which("unshare") is None:
        return False
    return subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode == 0


@pytest.mark.skipif(not _can_bind_mount(), reason="needs root for a private mount namespace (unshare -m)")
def test_a_run_folder_on_a_bind_mount_of_the_work_folders_file_system_is_recorded(tmp_path):
    (tmp_path / "runs").mkdir()
    (tmp_path / "bound").mkdir()
    record = [sys.executable, "-m", "sacscale.cli", "record-run", "--run-dir", tmp_path / "bound" / "r1",
              "--work-dir", "runs/.r1.partial", "--attic", "attic", "--timeout", "30", "--",
              sys.executable, "-c", TRAINER, "runs/.r1.partial", "0"]
    script = f"mount --bind {tmp_path / 'runs'} {tmp_path / 'bound'} && {shlex.join(map(str, record))}"
    done = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    run = tmp_path / "runs" / "r1"  # the bind mount's folder, seen outside the private namespace
    assert json.loads((run / "run.json").read_text())["status"] == "completed"
    assert (run / "precious.txt").read_text() == "work" and sorted(os.listdir(tmp_path / "runs")) == ["r1"]
