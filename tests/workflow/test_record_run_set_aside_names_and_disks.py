"""What `sacscale record-run` sets aside is kept, whatever the run's name and wherever its
attic and learning-state folder lie. A legal run name of some 230 bytes made the attic's
`<run>.failed-<stamp>` longer than a name can be: the failed attempt (its checkpoint) was
deleted, and a rerun was refused in a line naming no option. An attic or learning-state
folder on another file system than the run (a `logs/` linked to a scratch disk) could not
be renamed into: the completed run was marked failed and the attempt deleted. Now the
set-aside name is cut to fit, with a digest of the run's name, and a move across file
systems copies the entry whole under a temporary name before it removes the source; a move
that still fails leaves the attempt where it ran, named."""

import errno
import json
import os
import sys
from pathlib import Path

import pytest

from cli_runs import sacscale
from sacscale.pipeline import completed_run, moves, run_record, set_aside

LONG = "r" * 240  # with `.` and `.partial`, the work folder's name is 249 bytes: legal

# writes its file into the work folder, an event file when asked, then exits with CODE
TRAINER = ("import sys, pathlib; w = pathlib.Path(sys.argv[1]); w.mkdir(parents=True, exist_ok=True); "
           "(w / 'precious.txt').write_text('work'); code = int(sys.argv[2]); "
           "code or (w / 'tb' / 'rank0').mkdir(parents=True); "
           "code or (w / 'tb' / 'rank0' / 'events.out.tfevents.1.x').write_bytes(b'x'); sys.exit(code)")


def record_run(cwd, name, code, attic="attic", run_dir=None):
    run_dir = run_dir or f"runs/{name}"
    work = f"runs/.{name}.partial"
    return sacscale("record-run", "--run-dir", run_dir, "--work-dir", work, "--attic", attic, "--timeout", "30",
                    "--", sys.executable, "-c", TRAINER, work, str(code), cwd=cwd)


def kept_attempts(attic: Path) -> list[Path]:
    return sorted(attic.iterdir())


def test_a_failed_attempt_of_a_long_named_run_is_kept_in_the_attic(tmp_path):
    done = record_run(tmp_path, LONG, 3)
    assert done.returncode == 3, done.stderr
    [kept] = kept_attempts(tmp_path / "attic")
    assert len(os.fsencode(kept.name)) <= 255 and ".failed-" in kept.name and kept.name.startswith("rrr")
    assert (kept / "precious.txt").read_text() == "work" and (kept / "run.json").is_file()
    assert f"Its log and run.json are kept in attic/{kept.name}" in done.stderr
    assert not (tmp_path / "runs" / f".{LONG}.partial").exists()


def test_a_long_named_run_recorded_again_supersedes_the_first(tmp_path):
    for _ in range(2):
        done = record_run(tmp_path, LONG, 0)
        assert done.returncode == 0, done.stderr
    [superseded] = kept_attempts(tmp_path / "attic")
    assert len(os.fsencode(superseded.name)) <= 255 and ".superseded-" in superseded.name
    assert (superseded / "precious.txt").is_file() and (tmp_path / "runs" / LONG / "run.json").is_file()


def test_an_earlier_learning_state_of_a_long_named_run_is_set_aside_beside_it(tmp_path):
    (tmp_path / "work").mkdir()
    earlier = tmp_path / "state" / LONG
    (earlier / "checkpoints").mkdir(parents=True)
    (earlier / "checkpoints" / "final.pt").write_bytes(b"an earlier resume's state")
    assert completed_run.move_learning_state(tmp_path / "work", earlier) is None
    [kept] = list((tmp_path / "state").iterdir())
    assert len(os.fsencode(kept.name)) <= 255 and ".superseded-" in kept.name
    assert (kept / "checkpoints" / "final.pt").read_bytes() == b"an earlier resume's state"


def test_a_failed_attempt_is_kept_in_an_attic_on_another_disk(tmp_path, other_disk):
    done = record_run(tmp_path, "r1", 3, attic=other_disk / "attic")
    assert done.returncode == 3, done.stderr
    [kept] = kept_attempts(other_disk / "attic")
    assert kept.name.startswith("r1.failed-") and (kept / "precious.txt").read_text() == "work"
    assert not (tmp_path / "runs" / ".r1.partial").exists()


def test_a_learning_state_folder_on_another_disk_takes_the_state(tmp_path, other_disk):
    model = tmp_path / "work" / "ref_logs" / "G1WalkFlat" / "t_mujoco" / "model_10.pt"
    model.parent.mkdir(parents=True)
    model.write_bytes(b"m" * 5000)
    moved = completed_run.move_learning_state(tmp_path / "work", other_disk / "r1")
    assert (other_disk / "r1" / "ref_logs" / "G1WalkFlat" / "t_mujoco" / "model_10.pt").read_bytes() == b"m" * 5000
    assert not model.exists() and moved["moved_to"] == str(other_disk / "r1")


def test_a_work_folder_on_another_disk_than_the_run_folder_is_recorded(tmp_path, other_disk):
    done = record_run(tmp_path, "r1", 0, run_dir=other_disk / "r1")
    assert done.returncode == 0, done.stderr
    assert (other_disk / "r1" / "precious.txt").read_text() == "work"
    assert json.loads((other_disk / "r1" / "run.json").read_text())["status"] == "completed"
    assert not (tmp_path / "runs" / ".r1.partial").exists() and os.listdir(other_disk) == ["r1"]


def test_a_move_across_file_systems_copies_whole_then_removes(tmp_path, no_rename_across):
    (tmp_path / "from" / "run" / "checkpoints").mkdir(parents=True)
    (tmp_path / "from" / "run" / "checkpoints" / "final.pt").write_bytes(b"state")
    os.symlink("checkpoints/final.pt", tmp_path / "from" / "run" / "latest")
    (tmp_path / "to").mkdir()
    moves.move(tmp_path / "from" / "run", tmp_path / "to" / "run")
    assert (tmp_path / "to" / "run" / "checkpoints" / "final.pt").read_bytes() == b"state"
    assert os.readlink(tmp_path / "to" / "run" / "latest") == "checkpoints/final.pt"
    assert not (tmp_path / "from" / "run").exists() and os.listdir(tmp_path / "to") == ["run"]


def test_a_copy_that_fails_leaves_the_source_and_no_partial_entry(tmp_path, no_rename_across, monkeypatch):
    (tmp_path / "from" / "run").mkdir(parents=True)
    (tmp_path / "from" / "run" / "final.pt").write_bytes(b"state")
    (tmp_path / "to").mkdir()

    def full_disk(source, target, **_):
        Path(target).mkdir()
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(target))

    monkeypatch.setattr(moves.shutil, "copytree", full_disk)
    with pytest.raises(OSError, match="No space left"):
        moves.move(tmp_path / "from" / "run", tmp_path / "to" / "run")
    assert (tmp_path / "from" / "run" / "final.pt").read_bytes() == b"state" and os.listdir(tmp_path / "to") == []


def test_an_attempt_the_attic_cannot_take_is_left_where_it_ran(tmp_path, monkeypatch, capsys):
    work = tmp_path / ".r1.partial"
    work.mkdir()
    (work / "final.pt").write_bytes(b"state")

    def refused(source, target):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(target))

    monkeypatch.setattr(set_aside, "move", refused)
    where = run_record._set_aside(work, tmp_path / "attic", "failed")
    assert (work / "final.pt").read_bytes() == b"state"
    assert where == f"Its log and run.json are kept where it ran, in {work}: the attic could not take them"
    assert f"the attempt is left where it ran, in {work}" in capsys.readouterr().err
