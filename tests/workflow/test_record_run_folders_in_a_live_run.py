"""record-run makes or moves into four folders (run, work, attic, learning state) and none may
be, or lie inside, another command's live folder: a `--state-dir` inside a live train's run
folder had a completed run's learning state moved into that run's files, and a run and work
folder inside one were made there (the run's command then refused by the train's lock). Each is
refused in one line naming the option and the holder, exit 2, before anything is made or
started, as an attic there is. A work or run folder given as a symbolic link is refused too,
in words that say so: record-run moves and renames those folders by their names."""

import os
import subprocess
import sys

import pytest

from sacscale.locks import LOCK, TRAINER_LOCK, lock_beside
from sacscale.pipeline import run_record

OPTIONS = {"run_dir": "run", "work_dir": "wk", "attic": "at", "state_dir": "st"}
LANDS = {"run_dir": "this run, renamed there once complete, would land in that run's files",
         "work_dir": "this run would train among that run's files",
         "attic": "attempts moved there would land in that run's files",
         "state_dir": "this run's learning state, moved there once it trains, would land in that run's files"}
DOING = {TRAINER_LOCK: "a sacscale train is training",
         LOCK: "another sacscale command (a record-run perhaps) is at work"}


def _argv(tmp_path, **given):
    folders = {option: str(tmp_path / name) for option, name in OPTIONS.items()} | given
    marker = tmp_path / "ran"
    return [arg for option, folder in folders.items() for arg in (f"--{option.replace('_', '-')}", folder)] + [
        "--timeout", "30", "--", sys.executable, "-c", f"open({str(marker)!r}, 'w')"]


def _record_run(tmp_path, **given):
    return subprocess.run([sys.executable, "-m", "sacscale.cli", "record-run", *_argv(tmp_path, **given)],
                          capture_output=True, text=True, timeout=120)


def _refusal(option, folder, live, lock, holder, ending):
    flag = "--" + option.replace("_", "-")
    return (f"sacscale record-run: {flag} {folder}: is or lies inside a live folder of another command, {live}: "
            f"{DOING[ending]} there ({holder} holds {lock}); {LANDS[option]}: give a folder outside it (nothing "
            "was moved or started)\n")


@pytest.mark.parametrize("ending", [TRAINER_LOCK, LOCK])
@pytest.mark.parametrize("option", list(OPTIONS))
def test_a_folder_inside_a_live_runs_folder_is_refused_before_anything_is_made(tmp_path, option, ending):
    live = tmp_path / "live"
    live.mkdir()
    (live / "its_own_file").write_text("live")
    folder = live / "sub" / "x"
    with lock_beside(live, ending) as lock:  # a plain train's run folder, or a record-run's, in this process
        done = _record_run(tmp_path, **{option: str(folder)})
        assert done.returncode == 2, done.stderr
        assert done.stderr == _refusal(option, folder, live, lock, f"pid {os.getpid()}", ending)
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted([lock.name, "live"])  # no lock file, no attic
    assert [p.name for p in live.iterdir()] == ["its_own_file"]  # not even a lock file of record-run's inside it


HOLD = """
import sys
from pathlib import Path
from sacscale.locks import TRAINER_LOCK, lock_beside
with lock_beside(Path(sys.argv[1]), TRAINER_LOCK):
    print("held", flush=True)
    sys.stdin.read()
"""


def test_the_look_is_made_again_under_record_runs_locks(tmp_path, monkeypatch, capsys):
    """A train that takes the folder between the first look and record-run's locks is seen by
    the second look, made under them (as a train looks above under its own lock)."""
    live = tmp_path / "live"
    live.mkdir()
    taking = run_record._hold_locks
    holders = []

    def a_train_starts_meanwhile(*args):
        refused = taking(*args)
        holder = subprocess.Popen([sys.executable, "-c", HOLD, str(live)], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
        holders.append(holder)
        assert holder.stdout.readline() == "held\n"
        return refused

    monkeypatch.setattr(run_record, "_hold_locks", a_train_starts_meanwhile)
    try:
        code = run_record.main(_argv(tmp_path, state_dir=str(live / "state")))
    finally:
        for holder in holders:
            holder.communicate("", timeout=60)
    assert code == 2
    lock = tmp_path / f".live{TRAINER_LOCK}"
    assert capsys.readouterr().err == _refusal("state_dir", live / "state", live, lock, f"pid {holders[0].pid}",
                                               TRAINER_LOCK)
    assert list(live.iterdir()) == [] and not (tmp_path / "at").exists() and not (tmp_path / "ran").exists()


@pytest.mark.parametrize("option", ["work_dir", "run_dir"])
def test_a_work_or_run_folder_given_as_a_link_is_refused_as_a_link(tmp_path, option):
    real = tmp_path / "real"
    real.mkdir()
    (real / "its_own_file").write_text("kept")
    link = tmp_path / "link"
    link.symlink_to("real")
    done = _record_run(tmp_path, **{option: str(link)})
    assert done.returncode == 2, done.stderr
    flag = "--" + option.replace("_", "-")
    assert done.stderr == (f"sacscale record-run: {flag} {link}: a symbolic link (not followed); record-run moves "
                           "and renames this folder by its name, never through a link (the link would be moved, not "
                           "the folder it points to): give the folder's own path (nothing was moved or started)\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link", "real"] and link.is_symlink()
    assert [p.name for p in real.iterdir()] == ["its_own_file"]
