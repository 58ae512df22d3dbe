"""A plain `sacscale train` at record-run's run-folder name: live when record-run starts, it
is refused in one line naming that train (record-run set its folder aside as "superseded"
and the train died); made while record-run trains, the completed run is left in the work
folder with a line naming why (record-run ended `Directory not empty`, exit status 2)."""

import json
import os
import subprocess

from test_record_run_one_at_a_time import WAIT_S, record_run_cmd, wait_for

from sacscale.locks import TRAINER_LOCK, lock_beside


def test_a_plain_train_live_at_the_run_folder_name_is_refused_and_left_alone(tmp_path):
    runs = tmp_path / "runs"
    run_dir, work = runs / "p_r1_n1", runs / ".p_r1_n1.partial"
    run_dir.mkdir(parents=True)
    (run_dir / "its_own_file").write_text("live")
    cmd, go = record_run_cmd(tmp_path, run_dir, work, "second")
    go.write_text("go")
    with lock_beside(run_dir.resolve(), TRAINER_LOCK) as lock:  # the plain train, in this process
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=WAIT_S)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.strip() == (
        f"sacscale record-run: the run {run_dir}: a sacscale train is training in its run folder {run_dir} "
        f"(pid {os.getpid()} holds {lock}); not an earlier run to set aside: wait for it to end (nothing was "
        "moved or started)")
    assert sorted(p.name for p in run_dir.iterdir()) == ["its_own_file"]
    assert not work.exists() and not (tmp_path / "logs" / "attempts").exists()


def _made_meanwhile(tmp_path, hold: bool):
    runs = tmp_path / "runs"
    run_dir, work = runs / "p_r1_n1", runs / ".p_r1_n1.partial"
    cmd, go = record_run_cmd(tmp_path, run_dir, work, "first")
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wait_for(go.with_suffix(".started"), proc)
    run_dir.mkdir()
    (run_dir / "its_own_file").write_text("made meanwhile")
    if hold:
        with lock_beside(run_dir.resolve(), TRAINER_LOCK):  # the plain train, in this process
            go.write_text("go")
            _, err = proc.communicate(timeout=WAIT_S)
    else:
        go.write_text("go")
        _, err = proc.communicate(timeout=WAIT_S)
    assert proc.returncode == 1, err
    assert json.loads((work / "run.json").read_text())["status"] == "completed"
    assert sorted(p.name for p in run_dir.iterdir()) == ["its_own_file"]
    left = (f"the completed run is left in {work} (its run.json says completed); nothing was marked done: "
            f"move it to {run_dir} yourself once that folder is dealt with")
    return err, run_dir, left


def test_a_run_folder_a_plain_train_made_meanwhile_is_named_and_the_run_left_in_the_work_folder(tmp_path):
    err, run_dir, left = _made_meanwhile(tmp_path, hold=True)
    assert err.strip().splitlines()[-1] == (
        f"run_training: run p_r1_n1 completed, but {run_dir} was made meanwhile by a sacscale train outside this "
        f"record-run, pid {os.getpid()} holding its trainer lock; not replaced: {left}")
    assert "Directory not empty" not in err


def test_a_run_folder_made_meanwhile_by_another_command_is_named_so(tmp_path):
    err, run_dir, left = _made_meanwhile(tmp_path, hold=False)
    assert err.strip().splitlines()[-1] == (
        f"run_training: run p_r1_n1 completed, but {run_dir} was made meanwhile by another command, a sacscale "
        f"train given it as --log-dir perhaps; not replaced: {left}")
