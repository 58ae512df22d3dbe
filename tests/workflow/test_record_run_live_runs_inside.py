"""record-run never moves another command's live folder nor writes into one: a run or work
folder with a live train deeper down (`run/inner`, its trainer lock held under it) is not set
aside (the train died mid-run, its folder moved from under it), and an attic that is, or lies
inside, another live run's folder is refused (the second run's attempts and superseded run
landed in the first's evidence). One line, exit 2, nothing moved or started."""

import os
import subprocess

import pytest
from test_record_run_one_at_a_time import REFUSED_TRAIN, TRAIN, WAIT_S, record_run_cmd, start_first, wait_for

from sacscale.locks import TRAINER_LOCK, lock_beside


def _folders(tmp_path):
    runs = tmp_path / "runs"
    return runs / "p_r1_n1", runs / ".p_r1_n1.partial"


@pytest.mark.parametrize("which", ["run folder", "work folder"])
def test_a_folder_with_a_live_train_inside_is_not_set_aside(tmp_path, which):
    run_dir, work = _folders(tmp_path)
    folder = run_dir if which == "run folder" else work
    inner = folder / "inner"
    inner.mkdir(parents=True)
    (inner / "its_own_file").write_text("live")
    cmd, go = record_run_cmd(tmp_path, run_dir, work, "second")
    go.write_text("go")
    with lock_beside(inner.resolve(), TRAINER_LOCK) as lock:  # the plain train, in this process
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=WAIT_S)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    what = "an earlier run" if which == "run folder" else "a stale attempt"
    assert proc.stderr.strip() == (
        f"sacscale record-run: the run {run_dir}: a sacscale train is training inside its {which} {folder} "
        f"(pid {os.getpid()} holds {lock}); not {what} to set aside with it: wait for it to end (nothing was "
        "moved or started)")
    assert (inner / "its_own_file").read_text() == "live"
    assert not (tmp_path / "logs" / "attempts").exists()


def test_a_folder_with_a_live_record_run_inside_is_not_set_aside(tmp_path):
    run_dir, work = _folders(tmp_path)
    inner = run_dir / "inner"
    inner.mkdir(parents=True)
    cmd, go = record_run_cmd(tmp_path, run_dir, work, "second")
    go.write_text("go")
    with lock_beside(inner.resolve()) as lock:  # another record-run's lock, in this process
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=WAIT_S)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == (
        f"sacscale record-run: the run {run_dir}: another sacscale command (a record-run perhaps) is at work inside "
        f"its run folder {run_dir} (pid {os.getpid()} holds {lock}); not an earlier run to set aside with it: wait "
        "for it to end (nothing was moved or started)")
    assert inner.is_dir()


def test_a_failed_attempt_with_a_live_train_inside_is_left_as_it_is(tmp_path):
    run_dir, work = _folders(tmp_path)
    cmd, go = record_run_cmd(tmp_path, run_dir, work, "taken")
    cmd[cmd.index(TRAIN)] = REFUSED_TRAIN
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wait_for(go.with_suffix(".started"), proc)
    inner = work / "inner"
    inner.mkdir()
    with lock_beside(inner.resolve(), TRAINER_LOCK) as lock:  # a train made inside it, in this process
        go.write_text("go")
        _, err = proc.communicate(timeout=WAIT_S)
    assert proc.returncode == 2, err
    assert (f"run_training: {work}: a sacscale train is training inside it meanwhile (pid {os.getpid()} holds "
            f"{lock}); left to it as it is: no run.json written there, nothing moved") in err
    assert inner.is_dir() and not (work / "run.json").exists()
    assert list((tmp_path / "logs" / "attempts").iterdir()) == []


@pytest.mark.parametrize("where", ["work folder", "run folder", "inside the work folder"])
def test_an_attic_in_another_live_runs_folder_is_refused(tmp_path, where):
    first, go, run_dir, work = start_first(tmp_path / "A", tmp_path / "A" / "runs")
    try:
        attic = {"work folder": work, "run folder": run_dir, "inside the work folder": work / "sub"}[where]
        lock = (work if where != "run folder" else run_dir)
        second_run, second_work = tmp_path / "B" / "run", tmp_path / "B" / ".run.partial"
        second_run.mkdir(parents=True)
        (second_run / "old.txt").write_text("earlier")
        cmd, _ = record_run_cmd(tmp_path, second_run, second_work, "second")
        cmd[cmd.index("--attic") + 1] = str(attic)
        second = subprocess.run(cmd, capture_output=True, text=True, timeout=WAIT_S)
        assert second.returncode == 2 and second.stderr.count("\n") == 1, second.stderr
        assert second.stderr.strip() == (
            f"sacscale record-run: --attic {attic}: is or lies inside a live folder of another command, {lock}: "
            f"another sacscale command (a record-run perhaps) is at work there (pid {first.pid} holds "
            f"{lock.parent / f'.{lock.name}.lock'}); attempts moved there would land in that run's files: give a "
            "folder outside it (nothing was moved or started)")
        assert (second_run / "old.txt").exists() and not second_work.exists()
        assert sorted(p.name for p in work.iterdir()) == ["train.log"] and not run_dir.exists()
        go.write_text("go")
        assert first.wait(WAIT_S) == 0, first.stderr.read()
        assert sorted(p.name for p in run_dir.iterdir()) == ["run.json", "tb", "train.log"]
    finally:
        first.kill()
        first.wait()
