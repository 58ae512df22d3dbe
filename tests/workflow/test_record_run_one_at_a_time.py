"""One record-run at a time for one run: a second `sacscale record-run` given the same work
or run folder while the first runs (by hand, without --machine-lock) is refused at once in
one line naming the first, exit 2, and touches nothing; it no longer takes the first's
live work folder for a killed attempt's and moves it aside (both failed). The lock files
beside the folders are gone once the run ends, and one a killed record-run left does not
refuse the next."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from sacscale.locks import TRAINER_LOCK, HeldBeside, LockError, lock_beside, lock_file_beside

# A stand-in trainer: says it started (a file beside its work folder, not evidence), waits
# for the test's go file, then writes rank 0's event file under --log-dir.
TRAIN = """
import sys, time, pathlib
args = sys.argv[1:]
d = pathlib.Path(args[args.index("--log-dir") + 1])
go = pathlib.Path(args[args.index("--go") + 1])
go.with_suffix(".started").write_text("started")
while not go.exists():
    time.sleep(0.05)
(d / "tb" / "rank0").mkdir(parents=True)
(d / "tb" / "rank0" / "events.out.tfevents.1.x").write_bytes(b"x")
"""

WAIT_S = 120  # for a start or an end, on a loaded 2-core machine


def record_run_cmd(tmp_path, run_dir, work, tag):
    resolved = json.dumps({"run": run_dir.name, "run_set": "S", "seed": 1})
    go = tmp_path / f"{tag}.go"
    return [sys.executable, "-m", "sacscale.cli", "record-run", "--run-dir", str(run_dir), "--work-dir", str(work),
            "--attic", str(tmp_path / "logs" / "attempts"), "--resolved-json", resolved, "--timeout", "300",
            "--", sys.executable, "-c", TRAIN, "--log-dir", str(work), "--go", str(go)], go


def wait_for(path, proc):
    deadline = time.monotonic() + WAIT_S
    while not path.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, f"{path} did not appear within {WAIT_S} s"
        time.sleep(0.05)


def start_first(tmp_path, runs):
    run_dir, work = runs / "p_r1_n1", runs / ".p_r1_n1.partial"
    cmd, go = record_run_cmd(tmp_path, run_dir, work, "first")
    first = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wait_for(go.with_suffix(".started"), first)  # its trainer runs: its work folder is live
    return first, go, run_dir, work


@pytest.mark.parametrize("same", ["both folders", "work folder", "run folder"])
def test_a_second_record_run_of_a_live_run_is_refused_and_the_first_completes(tmp_path, same):
    runs = tmp_path / "results" / "S" / "runs"
    first, go, run_dir, work = start_first(tmp_path, runs)
    try:
        second_run = run_dir if same != "work folder" else runs / "other"
        second_work = work if same != "run folder" else runs / ".other.partial"
        cmd, _ = record_run_cmd(tmp_path, second_run, second_work, "second")
        t0 = time.monotonic()
        second = subprocess.run(cmd, capture_output=True, text=True, timeout=WAIT_S)
        assert second.returncode == 2, second.stderr
        assert second.stderr.count("\n") == 1 and "Traceback" not in second.stderr, second.stderr
        assert second.stderr.startswith(f"sacscale record-run: the run {second_run} is being recorded by another "
                                        f"record-run (pid {first.pid}); ")
        assert time.monotonic() - t0 < WAIT_S / 2  # refused at once, not after a wait
        attic = tmp_path / "logs" / "attempts"  # made by the first at its start
        assert work.is_dir() and list(attic.iterdir()) == []  # nothing was moved
        assert first.poll() is None
        go.write_text("go")
        assert first.wait(WAIT_S) == 0, first.stderr.read()
    finally:
        first.kill()
        first.wait()
    record = json.loads((run_dir / "run.json").read_text())
    assert record["status"] == "completed" and (run_dir / "tb" / "rank0").is_dir()
    assert sorted(p.name for p in runs.iterdir()) == ["p_r1_n1"]  # no work folder, no lock file left
    assert list((tmp_path / "logs" / "attempts").iterdir()) == []


def test_a_lock_left_by_a_killed_record_run_does_not_refuse_the_next(tmp_path):
    runs = tmp_path / "results" / "S" / "runs"
    first, _, run_dir, work = start_first(tmp_path, runs)
    first.send_signal(signal.SIGKILL)  # no cleanup runs: its lock files stay
    first.wait()
    assert lock_file_beside(work).is_file() and lock_file_beside(run_dir).is_file()
    cmd, go = record_run_cmd(tmp_path, run_dir, work, "next")
    go.write_text("go")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=WAIT_S)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((run_dir / "run.json").read_text())["status"] == "completed"
    (kept,) = (tmp_path / "logs" / "attempts").iterdir()  # the killed attempt's folder, set aside
    assert kept.name.startswith("p_r1_n1.interrupted-")
    assert sorted(p.name for p in runs.iterdir()) == ["p_r1_n1"]


def test_a_link_at_the_lock_files_name_is_refused_and_its_target_untouched(tmp_path):
    runs = tmp_path / "results" / "S" / "runs"
    runs.mkdir(parents=True)
    target = tmp_path / "target"
    target.write_text("not ours to lock")
    run_dir, work = runs / "p_r1_n1", runs / ".p_r1_n1.partial"
    lock_file_beside(work).symlink_to(target)
    cmd, go = record_run_cmd(tmp_path, run_dir, work, "linked")
    go.write_text("go")
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=WAIT_S)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "a symbolic link is refused" in proc.stderr and str(lock_file_beside(work)) in proc.stderr
    assert target.read_text() == "not ours to lock"
    assert sorted(p.name for p in runs.iterdir()) == ["..p_r1_n1.partial.lock"] and not (tmp_path / "logs").exists()


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to make a link of another user's")
def test_another_users_link_on_the_way_is_not_followed(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "results").symlink_to(elsewhere)
    os.lchown(tmp_path / "results", 65534, 65534)
    with pytest.raises(LockError, match="a symbolic link of another user's"):
        with lock_beside(tmp_path / "results" / "runs" / "x"):
            pass
    assert list(elsewhere.iterdir()) == []


def test_the_lock_is_one_holder_at_a_time_and_its_file_goes_with_it(tmp_path):
    folder = tmp_path / ".x.partial"
    with lock_beside(folder) as lock:
        assert lock == tmp_path / "..x.partial.lock" and (lock.stat().st_mode & 0o777) == 0o600
        assert lock.read_text() == f"pid {os.getpid()}\n"
        with pytest.raises(HeldBeside) as refused, lock_beside(folder):
            pass
        assert refused.value.holder == f"pid {os.getpid()}"
    assert list(tmp_path.iterdir()) == []
    with lock_beside(folder):  # taken again once released
        pass


SMALL_TRAIN = ["--devices", "cpu", "--num-envs", "4", "--batch-size", "16", "--replay-per-env", "16",
               "--num-critic-updates", "1", "--num-actor-updates", "1", "--no-compile", "--sim-threads", "1",
               "--extra", '{"learning_starts": 16, "actor_hidden": [16], "critic_hidden": [16], "num_atoms": 11}']


def test_a_plain_train_in_the_work_folder_is_named_as_a_trainer_not_a_record_run(tmp_path):
    """A `sacscale train` of its own holds its folder's trainer lock, not record-run's: the
    record-run is refused naming a trainer (before: 'another record-run', with the trainer's pid)."""
    from paused_runs import finished, started_paused

    runs = tmp_path / "results" / "S" / "runs"
    run_dir, work = runs / "p_r1_n1", runs / ".p_r1_n1.partial"
    work.mkdir(parents=True)  # only record-run makes a folder of that form (as an earlier one left it here)
    train = started_paused(tmp_path, "sacscale.train.rank:save_checkpoint", "train", *SMALL_TRAIN, "--iterations",
                           "2", "--checkpoint-every", "1", "--log-dir", work)
    try:
        before = sorted(p.name for p in work.iterdir())
        cmd, go = record_run_cmd(tmp_path, run_dir, work, "second")
        go.write_text("go")
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=WAIT_S)
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
        assert proc.stderr.strip() == (
            f"sacscale record-run: the run {run_dir}: a sacscale train is training in its work folder {work} "
            f"(pid {train.pid} holds {runs / '..p_r1_n1.partial.trainer-lock'}); not a stale attempt to set aside: "
            "wait for it to end (nothing was moved or started)")
        assert sorted(p.name for p in work.iterdir()) == before and not (tmp_path / "logs" / "attempts").exists()
        assert finished(tmp_path, train).returncode == 0
    finally:
        train.kill()
        train.wait()


# A stand-in for record-run's own trainer refused by a trainer lock another train took
# meanwhile: says it started, waits for the go file, exits 2 as the refusal does.
REFUSED_TRAIN = """
import sys, time, pathlib
args = sys.argv[1:]
go = pathlib.Path(args[args.index("--go") + 1])
go.with_suffix(".started").write_text("started")
while not go.exists():
    time.sleep(0.05)
sys.exit(2)
"""


def test_a_work_folder_a_plain_train_took_meanwhile_is_left_to_it(tmp_path):
    """A plain `train --log-dir WORK` that starts between record-run's look at the trainer
    lock and its own trainer's start holds the folder; record-run's trainer is refused, and
    record-run then set that live folder aside to its attic. It is left where it is, with
    nothing written into it."""
    runs = tmp_path / "runs"
    run_dir, work = runs / "p_r1_n1", runs / ".p_r1_n1.partial"
    cmd, go = record_run_cmd(tmp_path, run_dir, work, "taken")
    cmd[cmd.index(TRAIN)] = REFUSED_TRAIN
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wait_for(go.with_suffix(".started"), proc)
    with lock_beside(work.resolve(), TRAINER_LOCK):  # the plain train, in this process
        (work / "its_own_file").write_text("live")
        go.write_text("go")
        _, err = proc.communicate(timeout=WAIT_S)
        assert proc.returncode == 2, err
        assert "took it meanwhile" in err and "nothing moved" in err, err
        assert (work / "its_own_file").read_text() == "live" and not (work / "run.json").exists()
        assert not (tmp_path / "logs" / "attempts").exists() or not any((tmp_path / "logs" / "attempts").iterdir())
