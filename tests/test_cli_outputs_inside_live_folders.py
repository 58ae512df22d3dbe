"""Outputs into another command's live folder. Before: a command's output lock was its own
(`.<name>.lock` beside the file), so `prepare-model --output-dir RUN` and `evaluate --output
RUN/e.json` wrote into the run folder of a live `train` (its `.RUN.trainer-lock` held), into
a live record-run's work folder (the recorded run then carried them as its own), and made the
run folder a live record-run was to give its completed run (which was then not recorded).
And a folder output reached through a link at its name took a lock of the link's name: two
prepare-model wrote into one folder at once. Now every output is refused in one line naming
the holder where it is, or lies inside, a folder whose lock another process holds (exit 2,
nothing written), but for the command a record-run starts, in its own work folder; and a
folder output is locked by its real path."""

import os
import subprocess
import sys

import pytest
from cli_runs import REPO, SET, one_line, sacscale

from sacscale.locks import RECORDED_IN_VARIABLE

METRICS = REPO / "results" / SET / "metrics" / "shared_r1_n1_pool7.json"
HOLD = ("import sys; from pathlib import Path; from sacscale.locks import lock_beside\n"
        "with lock_beside(Path(sys.argv[1]), sys.argv[2]):\n    print('held', flush=True); sys.stdin.read()")
TRAINING = "a sacscale train is training"
RECORDING = "another sacscale command (a record-run perhaps) is at work"


@pytest.fixture()
def hold():
    """hold(folder, ending): another process holds `folder`'s lock until the test ends; its pid."""
    holders = []

    def holding(folder, ending):
        holder = subprocess.Popen([sys.executable, "-c", HOLD, str(folder), ending], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
        holders.append(holder)
        assert holder.stdout.readline().strip() == "held"
        return holder.pid
    yield holding
    for holder in holders:
        holder.stdin.close()
        holder.wait(timeout=30)


def live_train_folder(tmp_path, hold):
    """tmp_path/trun, a run folder another process holds as a live train's; (folder, its pid)."""
    run = tmp_path / "trun"
    run.mkdir()
    return run, hold(run, ".trainer-lock")


def refusal(option, path, folder, doing, pid, lock):
    return (f"error: {option} {path}: is or lies inside {folder}, where {doing} (pid {pid} holds {lock}), whose files "
            "an output there would join; nothing was written: write it elsewhere, or once that command has ended")


def _aggregate(tmp_path, csv):
    return sacscale("aggregate", METRICS, "--csv", csv, "--json", tmp_path / "s.json")


@pytest.mark.parametrize("inside", ["", "deeper/"])
def test_an_output_inside_a_live_trainers_run_folder_is_refused(tmp_path, hold, inside):
    run, pid = live_train_folder(tmp_path, hold)
    csv = run / f"{inside}s.csv"
    one_line(_aggregate(tmp_path, csv), refusal("--csv", csv, run, TRAINING, pid, tmp_path / ".trun.trainer-lock"))
    assert list(run.iterdir()) == [] and not (tmp_path / "s.json").exists()


def test_a_command_that_wrote_its_output_unlocked_refuses_it_too(tmp_path, hold):
    """analyze-run (as env-bench and solver-study) wrote its one file without its lock."""
    run, pid = live_train_folder(tmp_path, hold)
    out = run / "m.json"
    one_line(sacscale("analyze-run", REPO / "results" / SET / "runs" / "shared_r1_n1_pool7", "--output", out),
             refusal("--output", out, run, TRAINING, pid, tmp_path / ".trun.trainer-lock"))
    assert list(run.iterdir()) == []


def test_a_folder_output_that_is_a_live_trainers_run_folder_is_refused(tmp_path, hold):
    run, pid = live_train_folder(tmp_path, hold)
    one_line(sacscale("prepare-model", "--output-dir", run, "--steps", "1"),
             refusal("--output-dir", run, run, TRAINING, pid, tmp_path / ".trun.trainer-lock"))
    assert list(run.iterdir()) == []


@pytest.mark.parametrize("made", [True, False], ids=["work folder", "run folder not made yet"])
def test_an_output_inside_a_live_record_runs_folder_is_refused(tmp_path, hold, made):
    folder = tmp_path / ("W" if made else "R")
    folder.mkdir(exist_ok=True) if made else None
    pid = hold(folder, ".lock")
    csv, lock = folder / "e.csv", tmp_path / f".{folder.name}.lock"
    one_line(_aggregate(tmp_path, csv), refusal("--csv", csv, folder, RECORDING, pid, lock))
    assert (list(folder.iterdir()) == []) if made else not folder.exists()  # the completed run's name left free
    out = folder / "pm"
    one_line(sacscale("prepare-model", "--output-dir", out, "--steps", "1"),
             refusal("--output-dir", out, folder, RECORDING, pid, lock))
    assert (list(folder.iterdir()) == []) if made else not folder.exists()


def test_the_command_a_record_run_starts_writes_into_its_work_folder(tmp_path, hold):
    work = tmp_path / "W"
    work.mkdir()
    hold(work, ".lock")
    env = {**os.environ, RECORDED_IN_VARIABLE: os.path.realpath(work)}  # as record-run's command has it
    done = subprocess.run([sys.executable, "-m", "sacscale.cli", "aggregate", METRICS, "--csv", work / "e.csv",
                           "--json", tmp_path / "s.json"], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    assert (work / "e.csv").is_file()


def test_a_folder_output_through_a_link_at_its_name_takes_the_folders_own_lock(tmp_path, hold):
    folder = tmp_path / "pm"
    folder.mkdir()
    (tmp_path / "link").symlink_to("pm")
    pid = hold(folder, ".lock")  # a prepare-model writing into pm
    one_line(sacscale("prepare-model", "--output-dir", "link", "--steps", "1", cwd=tmp_path),
             f"error: --output-dir link: another sacscale command is writing this output (pid {pid} holds "
             f"{tmp_path / '.pm.lock'}); nothing was written: run this one once it has finished, or write it elsewhere")
    assert list(folder.iterdir()) == [] and sorted(p.name for p in tmp_path.iterdir()) == [".pm.lock", "link", "pm"]


def test_more_measurement_threads_than_cpus_are_refused(tmp_path):
    """A rate per thread of threads taking turns on fewer CPUs is of no thread's work."""
    cpus = len(os.sched_getaffinity(0))
    one_line(sacscale("prepare-model", "--output-dir", tmp_path / "pm", "--threads", cpus + 1, "--steps", "1"),
             f"sacscale prepare-model: error: --threads {cpus + 1}: must be 1..{cpus}, the CPUs this process may use")
    assert list(tmp_path.iterdir()) == []


def test_a_probes_output_inside_a_live_trainers_run_folder_is_refused_before_its_ranks_start(tmp_path, hold):
    run, pid = live_train_folder(tmp_path, hold)
    out = run / "correctness.json"
    done = sacscale("probe", "correctness", "--devices", "cpu", "--iterations", "1", "--output", out)
    one_line(done, refusal("--output", out, run, TRAINING, pid, tmp_path / ".trun.trainer-lock"))
    assert list(run.iterdir()) == []


def test_a_report_into_a_live_record_runs_folder_is_refused(tmp_path, hold):
    work = tmp_path / "W"
    work.mkdir()
    pid = hold(work, ".lock")
    out = work / "report"
    done = sacscale("report", "--run-set", REPO / "results" / SET, "--output-dir", out)
    said = refusal("--output-dir", out, work, RECORDING, pid, tmp_path / ".W.lock").removeprefix("error: ")
    one_line(done, f"sacscale report: {said}")  # as the report's other refusals read, without "error:"
    assert list(work.iterdir()) == []


def test_policies_left_out_into_a_live_trainers_run_folder_are_refused_before_anything_moves(tmp_path, hold):
    root, run = tmp_path / "S", tmp_path / "trun"
    (root / "runs" / "a" / "checkpoints").mkdir(parents=True)
    (root / "runs" / "a" / "checkpoints" / "final.pt").write_bytes(b"policy")
    run.mkdir()
    pid = hold(run, ".trainer-lock")
    left_out = run / "left-out"
    done = sacscale("manifest", root, "--scope", "--keep-policies", "a", "--left-out-dir", left_out)
    one_line(done, refusal("--left-out-dir", left_out, run, TRAINING, pid, tmp_path / ".trun.trainer-lock"))
    assert list(run.iterdir()) == [] and sorted(p.name for p in root.iterdir()) == ["runs"]


def test_a_video_into_a_live_trainers_run_folder_is_refused(tmp_path, hold, gl_env):
    run, pid = live_train_folder(tmp_path, hold)
    out = run / "walk.gif"
    done = sacscale("render", REPO / "results" / SET / "runs" / "shared_r1_n1_pool7", "--output", out,
                    "--seconds", "0.2")
    one_line(done, refusal("--output", out, run, TRAINING, pid, tmp_path / ".trun.trainer-lock"))
    assert list(run.iterdir()) == []
