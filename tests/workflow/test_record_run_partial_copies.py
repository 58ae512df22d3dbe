"""record-run's copies across file systems (a completed run into its run folder, an attempt
into the attic) are made under a hidden partial name first. That name was `.<run>.copying-<pid>`:
another user who planted it (the pid shows in `ps`) in a shared folder such as /dev/shm had
her entry deleted by root, and the completed run was not moved, in a line blaming a run folder
that did not exist. A record-run killed mid-copy left its partial copy (hundreds of megabytes
on a RAM disk) that nothing removed or named. And a `.sacscale-moved-to` marker naming any
folder (`/tmp`) had a failed attempt deleted as "already kept whole" there. Now the partial
copy is made in a private folder of the process's own (an exclusive mkdir of an unguessable
name, 0700, locked while it copies), removed only while it is still the folder it made; the
next record-run removes this user's partial copies whose maker is gone, saying so; and a
marker counts only where it names this run's attempt in this attic holding the same run.json."""

import errno
import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cli_runs import sacscale
from sacscale.pipeline import completed_run, moves, set_aside

SRC = str(Path(moves.__file__).parents[2])
TRAINER = ("import sys, pathlib; w = pathlib.Path(sys.argv[1]); w.mkdir(parents=True, exist_ok=True); "
           "(w / 'precious.txt').write_text('work')")


def source_run(tmp_path: Path) -> Path:
    (tmp_path / "from" / "run" / "checkpoints").mkdir(parents=True)
    (tmp_path / "from" / "run" / "checkpoints" / "final.pt").write_bytes(b"state")
    (tmp_path / "to").mkdir()
    return tmp_path / "from" / "run"


def planted(path: Path) -> Path:
    path.mkdir()
    (path / "evefile").write_text("evework")
    if os.geteuid() == 0:  # another user's, as on a shared folder
        os.chown(path, 65534, 65534)
    return path


def test_an_entry_planted_at_the_guessable_partial_name_is_neither_used_nor_removed(tmp_path, no_rename_across):
    source = source_run(tmp_path)
    eve = planted(tmp_path / "to" / f".run.copying-{os.getpid()}")
    moves.move(source, tmp_path / "to" / "run")
    assert (tmp_path / "to" / "run" / "checkpoints" / "final.pt").read_bytes() == b"state" and not source.exists()
    assert (eve / "evefile").read_text() == "evework"
    assert sorted(os.listdir(tmp_path / "to")) == sorted([eve.name, "run"])


def test_a_partial_name_taken_already_gives_way_to_another(tmp_path, no_rename_across, monkeypatch):
    source = source_run(tmp_path)
    eve = planted(tmp_path / "to" / f".run.copying-{os.getpid()}-{'0' * 16}")
    tokens = iter(["0" * 16, "1" * 16])
    monkeypatch.setattr(moves.secrets, "token_hex", lambda _n: next(tokens))
    moves.move(source, tmp_path / "to" / "run")
    assert (tmp_path / "to" / "run" / "checkpoints" / "final.pt").read_bytes() == b"state"
    assert (eve / "evefile").read_text() == "evework" and sorted(os.listdir(tmp_path / "to")) == [eve.name, "run"]


def test_the_partial_folder_is_private_while_the_copy_is_made(tmp_path, no_rename_across, monkeypatch):
    source = source_run(tmp_path)
    seen = []
    real = moves.shutil.copytree

    def copytree(src, dst, *args, **kwargs):
        if Path(dst).name == "run":  # the top of the copy, not a folder inside
            seen.append(os.stat(Path(dst).parent).st_mode & 0o777)
        return real(src, dst, *args, **kwargs)

    monkeypatch.setattr(moves.shutil, "copytree", copytree)
    moves.move(source, tmp_path / "to" / "run")
    assert seen == [0o700] and os.listdir(tmp_path / "to") == ["run"]


def test_a_failed_copy_removes_no_entry_it_did_not_make(tmp_path, no_rename_across, monkeypatch):
    source = source_run(tmp_path)

    def swapped_then_full(src, dst, **_):  # another user renames the partial folder away and plants her own
        [ours] = os.listdir(tmp_path / "to")
        os.rename(tmp_path / "to" / ours, tmp_path / "ours-moved-away")
        planted(tmp_path / "to" / ours)
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(dst))

    monkeypatch.setattr(moves.shutil, "copytree", swapped_then_full)
    with pytest.raises(OSError, match="No space left"):
        moves.move(source, tmp_path / "to" / "run")
    [eve] = os.listdir(tmp_path / "to")
    assert (tmp_path / "to" / eve / "evefile").read_text() == "evework"
    assert (source / "checkpoints" / "final.pt").read_bytes() == b"state"


def test_a_completed_run_not_moved_names_the_real_path_and_cause(tmp_path):
    partial = tmp_path / ".r1.copying-12-0123456789abcdef" / "r1" / "final.pt"
    exc = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(partial))
    line, code = completed_run.not_in_place("r1", tmp_path / ".r1.partial", tmp_path / "r1", exc)
    assert code == 1
    assert line.startswith(f"run r1 completed, but cannot be moved to {tmp_path / 'r1'} ('{partial}': "
                           f"{os.strerror(errno.ENOSPC)}); the completed run is left in ")


def dead_pid() -> int:
    gone = subprocess.Popen([sys.executable, "-c", ""])
    gone.wait()
    return gone.pid


def leftover_copy(folder: Path, name: str, pid: int, token: str | None = "ab" * 8, marked: bool = True) -> Path:
    """A partial copy of `name` as a move killed mid-copy leaves it: its private folder, the
    marker its maker wrote first, part of the copy."""
    path = folder / (f".{name}.copying-{pid}" + (f"-{token}" if token else ""))
    (path / name / "checkpoints").mkdir(parents=True)
    (path / name / "checkpoints" / "final.pt").write_bytes(b"x" * 1000)
    if marked:
        marker = {"pid": pid, "random": token, "target": str((folder / name).absolute())}
        (path / moves.COPY_MARKER).write_text(json.dumps(marker))
    return path


def test_a_dead_record_runs_partial_copies_are_removed_and_said(tmp_path):
    runs, attic = tmp_path / "runs", tmp_path / "attic"
    runs.mkdir(), attic.mkdir()
    gone = dead_pid()
    dead = [leftover_copy(runs, "r1", gone), leftover_copy(attic, "r1.failed-20260101T000000.000000Z", gone)]
    live = leftover_copy(runs, "r1", os.getpid())
    other_run = leftover_copy(runs, "r2", gone)
    other_runs_attempt = leftover_copy(attic, "r2.failed-20260101T000000.000000Z", gone)
    locked = leftover_copy(runs, "r1", gone, token="cd" * 8)  # its maker's pid gone from view, its lock held
    hers = leftover_copy(runs, "r1", gone, token="ef" * 8)
    if os.geteuid() != 0:
        pytest.skip("needs root to make another user's entry")
    os.chown(hers, 65534, 65534)
    fd = os.open(locked, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    said: list[str] = []
    try:
        set_aside.dead_copies_removed(runs / "r1", attic, None, said.append)
    finally:
        os.close(fd)
    assert said == [f"removed {path}, the partial copy of a move that process {gone} did not finish (it is gone)"
                    for path in dead]
    assert not any(path.exists() for path in dead)
    assert all(path.is_dir() for path in (live, other_run, other_runs_attempt, locked, hers))


def test_a_copy_killed_after_its_folder_was_made_is_found_by_its_marker(tmp_path):
    """The private folder and its marker as the copier makes them, in a process then killed."""
    (tmp_path / "attic").mkdir()
    target = tmp_path / "attic" / "r1.failed-20260101T000000.000000Z"
    code = ("import os, sys, pathlib; from sacscale.pipeline import moves; "
            "moves._private_folder(pathlib.Path(sys.argv[1])); os._exit(0)")
    subprocess.run([sys.executable, "-c", code, str(target)], check=True, env={**os.environ, "PYTHONPATH": SRC})
    [partial] = (tmp_path / "attic").iterdir()
    said: list[str] = []
    set_aside.dead_copies_removed(tmp_path / "runs" / "r1", tmp_path / "attic", None, said.append)
    assert len(said) == 1 and said[0].startswith(f"removed {partial}, the partial copy of a move that process ")
    assert not partial.exists()


@pytest.mark.parametrize("how", ["old_form", "no_marker", "marker_of_another_pid", "marker_of_another_target",
                                 "marker_a_link", "not_an_attempts_name"])
def test_a_folder_that_only_looks_like_a_partial_copy_is_kept(tmp_path, how):
    """The user's own folders named like a partial copy (`.mydata.copying-999999`) were removed
    on their name alone: one without its maker's marker, or whose marker names another
    process or target, or not one of this run's attempts in the attic, is never removed."""
    attic = tmp_path / "attic"
    attic.mkdir()
    gone = dead_pid()
    attempt = "r1.failed-20260101T000000.000000Z"
    if how == "old_form":
        kept = attic / f".mydata.copying-{gone}"
        kept.mkdir()
    elif how == "no_marker":
        kept = leftover_copy(attic, attempt, gone, marked=False)
    elif how == "not_an_attempts_name":
        kept = leftover_copy(attic, "mydata", gone)
    else:
        kept = leftover_copy(attic, attempt, gone)
        marker = json.loads((kept / moves.COPY_MARKER).read_text())
        if how == "marker_of_another_pid":
            marker["pid"] = gone + 1
        elif how == "marker_of_another_target":
            marker["target"] = str(tmp_path / "elsewhere" / attempt)
        (kept / moves.COPY_MARKER).write_text(json.dumps(marker))
        if how == "marker_a_link":
            (tmp_path / "real-marker").write_text(json.dumps(marker))
            (kept / moves.COPY_MARKER).unlink()
            (kept / moves.COPY_MARKER).symlink_to(tmp_path / "real-marker")
    (kept / "important.txt").write_text("precious")
    said: list[str] = []
    set_aside.dead_copies_removed(tmp_path / "runs" / "r1", attic, None, said.append)
    assert said == [] and (kept / "important.txt").read_text() == "precious"


def test_record_run_keeps_the_users_lookalike_folder_in_the_attic(tmp_path):
    attic = tmp_path / "attic"
    mine = attic / ".mydata.copying-999999"
    mine.mkdir(parents=True)
    (mine / "important.txt").write_text("precious")
    done = sacscale("record-run", "--run-dir", "runs/r1", "--work-dir", "runs/.r1.partial", "--attic", "attic",
                    "--timeout", "30", "--", sys.executable, "-c", TRAINER, "runs/.r1.partial", cwd=tmp_path)
    assert "partial copy" not in done.stderr, done.stderr
    assert (mine / "important.txt").read_text() == "precious"


def test_a_rerun_after_a_kill_mid_copy_removes_the_partial_copy(tmp_path):
    work = tmp_path / "runs" / ".r1.partial"
    work.mkdir(parents=True)
    (work / "run.json").write_text(json.dumps({"run": "r1", "status": "completed"}))
    partial = leftover_copy(tmp_path / "runs", "r1", dead_pid())
    done = sacscale("record-run", "--run-dir", "runs/r1", "--work-dir", "runs/.r1.partial", "--attic", "attic",
                    "--timeout", "30", "--", sys.executable, "-c", TRAINER, "runs/.r1.partial", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert f"removed runs/{partial.name}, the partial copy of a move that process" in done.stderr
    assert not partial.exists() and (work / "run.json").is_file()


def failed_attempt(tmp_path: Path, marker: str) -> Path:
    work = tmp_path / ".r1.partial"
    (work / "checkpoints").mkdir(parents=True)
    (work / "checkpoints" / "last.pt").write_bytes(b"state")
    (work / "run.json").write_text(json.dumps({"run": "r1", "status": "failed"}))
    (work / moves.MOVED_MARKER).write_text(f"{marker}\n")
    return work


def test_a_marker_naming_a_folder_outside_the_attic_is_no_proof_the_attempt_is_kept(tmp_path):
    work = failed_attempt(tmp_path, "/tmp")
    said: list[str] = []
    kept = set_aside.move_aside(work, tmp_path / "attic", "failed", said.append)
    assert kept.parent == tmp_path / "attic" and kept.name.startswith("r1.failed-")
    assert (kept / "checkpoints" / "last.pt").read_bytes() == b"state" and said == [f"moved {work} to {kept}"]


@pytest.mark.parametrize("copy_name, run_json", [
    ("r2.failed-20260101T000000.000000Z", {"run": "r1", "status": "failed"}),  # another run's name
    ("r1.failed-20260101T000000.000000Z", {"run": "r1", "status": "timed_out"}),  # another attempt's
    ("r1-notes", {"run": "r1", "status": "failed"}),  # no set-aside name
])
def test_a_marker_naming_another_folder_in_the_attic_is_no_proof(tmp_path, copy_name, run_json):
    copy = tmp_path / "attic" / copy_name
    copy.mkdir(parents=True)
    (copy / "run.json").write_text(json.dumps(run_json))
    work = failed_attempt(tmp_path, str(copy))
    kept = set_aside.move_aside(work, tmp_path / "attic", "failed", lambda _line: None)
    assert kept != copy and (kept / "checkpoints" / "last.pt").read_bytes() == b"state" and not work.exists()
    assert json.loads((copy / "run.json").read_text()) == run_json


def test_a_marker_naming_this_attempts_whole_copy_removes_what_is_left(tmp_path):
    copy = tmp_path / "attic" / "r1.failed-20260101T000000.000000Z"
    copy.mkdir(parents=True)
    work = failed_attempt(tmp_path, str(copy))
    (copy / "run.json").write_bytes((work / "run.json").read_bytes())
    said: list[str] = []
    assert set_aside.move_aside(work, tmp_path / "attic", "failed", said.append) == copy and not work.exists()
    assert said == [f"removed {work}, what was left of an attempt already kept whole in {copy}"]


MOVE_ASIDE = ("import sys, pathlib; from sacscale.pipeline import set_aside; "
              "print(set_aside.move_aside(pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), 'failed', print))")


@pytest.mark.parametrize("planted_as", ["fifo marker", "linked marker", "fifo run.json"])
def test_a_marker_or_run_json_not_a_file_of_ours_is_no_proof_and_never_waited_on(tmp_path, planted_as):
    copy = tmp_path / "attic" / "r1.failed-20260101T000000.000000Z"
    copy.mkdir(parents=True)
    work = failed_attempt(tmp_path, str(copy))
    (copy / "run.json").write_bytes((work / "run.json").read_bytes())  # a whole copy, were the marker ours
    if planted_as == "fifo marker":  # a reader that opens it waits for a writer forever
        (work / moves.MOVED_MARKER).unlink()
        os.mkfifo(work / moves.MOVED_MARKER)
    elif planted_as == "linked marker":
        (tmp_path / "elsewhere").write_text(f"{copy}\n")
        (work / moves.MOVED_MARKER).unlink()
        (work / moves.MOVED_MARKER).symlink_to(tmp_path / "elsewhere")
    else:
        (work / "run.json").unlink()
        os.mkfifo(work / "run.json")
    done = subprocess.run([sys.executable, "-c", MOVE_ASIDE, str(work), str(tmp_path / "attic")], capture_output=True,
                          text=True, timeout=60, env={**os.environ, "PYTHONPATH": SRC})
    assert done.returncode == 0, done.stderr
    kept = Path(done.stdout.splitlines()[-1])
    assert kept != copy and kept.parent == tmp_path / "attic" and not work.exists()
    assert (kept / "checkpoints" / "last.pt").read_bytes() == b"state"
    assert done.stdout.splitlines()[0] == f"moved {work} to {kept}"
