"""The machine's training lock and the commands run by hand. Before: only `record-run
--machine-lock` took it, so a `sacscale train` started by hand in another terminal trained
beside a pipeline's measured run on the same CPUs and GPUs, both exited 0 and the set said
nothing. Now `train`, `train-reference`, `probe`, `env-bench`, `learner-bench` and
`solver-study` hold it shared: beside each other, never beside a measured run (refused in one
line, exit 2, nothing made), and a measured run is refused while one of them holds it, naming
it as not a measured run (the holder was called a command run by hand even where it was
another invocation's probe stage). The trainer record-run starts (ours or the reference)
inherits record-run's locked descriptor and takes that hold as its own; the variable naming
a descriptor counts only where that descriptor is the lock file itself."""

import json
import os
import subprocess
import sys

from cli_runs import one_line, record_run_with_machine_lock, sacscale
from paused_runs import finished, started_paused
from sacscale.pipeline.machine_lock import FD_VARIABLE, hand_run_hold, training_machine

SMALL = '{"learning_starts": 16, "actor_hidden": [16], "critic_hidden": [16], "num_atoms": 11}'
ARGS = ["--devices", "cpu", "--num-envs", "4", "--batch-size", "16", "--log-every", "1", "--replay-per-env", "16",
        "--num-critic-updates", "1", "--num-actor-updates", "1", "--extra", SMALL, "--no-compile",
        "--sim-threads", "1", "--timeout-s", "120", "--iterations", "2"]
MID_TRAINING = "sacscale.train.rank:save_checkpoint"
REFUSED = ("sacscale train would run beside a measured run and skew its numbers: wait for it to end, or set "
           "SACSCALE_MACHINE_LOCK_DIR to a folder of its own to train beside it knowingly (nothing was started)")


def test_a_hand_run_train_beside_a_measured_run_is_refused_in_one_line_making_nothing(tmp_path):
    run = tmp_path / "run"
    with training_machine("q_r1_n1", "B"):
        done = sacscale("train", *ARGS, "--log-dir", run)
        one_line(done, f"sacscale train: error: this machine's training lock is held by pid {os.getpid()} "
                       "(run q_r1_n1, set B)")
        assert REFUSED in done.stderr
        for command in (["env-bench", "--steps", "1"], ["learner-bench"], ["probe", "correctness",
                                                                            "--output", tmp_path / "c.json"]):
            one_line(sacscale(*command), f"sacscale {command[0]} would run beside a measured run")
    assert not run.exists() and not (tmp_path / "c.json").exists()


def test_train_reference_and_solver_study_beside_a_measured_run_are_refused_in_one_line(tmp_path):
    """Before: neither took the lock; the reference trained (and solver-study timed its steps)
    beside the measured run, which recorded its throughput against their load."""
    with training_machine("q_r1_n1", "B"):
        done = sacscale("train-reference", "--devices", "0", "--iterations", "2", "--log-dir", tmp_path / "tr")
        one_line(done, "sacscale train-reference would run beside a measured run and skew its numbers")
        done = sacscale("solver-study", "--num-envs", "4", "--steps", "5", "--output", tmp_path / "ss.json")
        one_line(done, "sacscale solver-study would run beside a measured run and skew its numbers")
    assert not (tmp_path / "tr").exists() and not (tmp_path / "ss.json").exists()


def test_a_measured_run_names_a_probe_holding_the_machine_as_not_a_measured_run(tmp_path):
    """The pipeline's probe stage holds the lock as a command run by hand does: the refusal
    said "a command run by hand" of another invocation's probe."""
    with hand_run_hold("probe"):
        proc = record_run_with_machine_lock(tmp_path, {})
    assert proc.returncode == 1, proc.stderr
    assert (f"this machine's training lock is held by `sacscale probe` (pid {os.getpid()}; not a measured run)"
            in proc.stderr)
    assert "a command run by hand or another pipeline invocation's probe stage is training or measuring" in proc.stderr


def test_the_reference_trainer_record_run_starts_takes_its_hold(tmp_path):
    """The pipeline's reference run: record-run --machine-lock -- sacscale train-reference. It
    gets past the lock to its own checks (here: no reference interpreter), not refused by the
    hold its record-run took."""
    run_dir = tmp_path / "runs" / "q_r1_n1"
    work = run_dir.parent / ".q_r1_n1.partial"
    proc = subprocess.run([sys.executable, "-m", "sacscale.cli", "record-run", "--run-dir", run_dir, "--work-dir",
                           work, "--attic", tmp_path / "logs", "--resolved-json", json.dumps({"run": "q_r1_n1"}),
                           "--timeout", "300", "--machine-lock", "--", sys.executable, "-m", "sacscale.cli",
                           "train-reference", "--reference-python", tmp_path / "none" / "bin" / "python",
                           "--devices", "0", "--num-envs", "4", "--iterations", "2", "--log-dir", work],
                          capture_output=True, text=True, timeout=400)
    assert "run q_r1_n1 failed (exit status 2)" in proc.stderr, proc.stderr
    log = next((tmp_path / "logs").glob("q_r1_n1.failed-*/train.log")).read_text()
    assert "sacscale train-reference: error: --reference-python" in log and "no such interpreter" in log, log
    assert "would run beside a measured run" not in log


def test_two_hand_run_trains_run_at_once(tmp_path):
    first = started_paused(tmp_path, MID_TRAINING, "train", *ARGS, "--checkpoint-every", "1",
                           "--log-dir", tmp_path / "one")
    second = sacscale("train", *ARGS, "--log-dir", tmp_path / "two")
    assert second.returncode == 0, second.stderr
    done = finished(tmp_path, first)
    assert done.returncode == 0, done.stderr


def test_a_measured_run_is_refused_while_a_hand_run_train_holds_the_machine(tmp_path):
    first = started_paused(tmp_path, MID_TRAINING, "train", *ARGS, "--checkpoint-every", "1",
                           "--log-dir", tmp_path / "one")
    try:
        proc = record_run_with_machine_lock(tmp_path, {})
        assert proc.returncode == 1, proc.stderr
        assert (f"run q_r1_n1 not started: this machine's training lock is held by `sacscale train` "
                f"(pid {first.pid}; not a measured run)") in proc.stderr
        assert "a command run by hand or another pipeline invocation's probe stage is training" in proc.stderr
        assert not (tmp_path / "elsewhere" / "runs" / "q_r1_n1").exists()
    finally:
        done = finished(tmp_path, first)
    assert done.returncode == 0, done.stderr


def test_the_train_record_run_starts_under_the_machine_lock_trains(tmp_path):
    run_dir = tmp_path / "runs" / "q_r1_n1"
    work = run_dir.parent / ".q_r1_n1.partial"
    proc = subprocess.run([sys.executable, "-m", "sacscale.cli", "record-run", "--run-dir", run_dir, "--work-dir",
                           work, "--attic", tmp_path / "logs", "--resolved-json", json.dumps({"run": "q_r1_n1"}),
                           "--timeout", "300", "--machine-lock", "--", sys.executable, "-m", "sacscale.cli",
                           "train", *ARGS, "--log-dir", work], capture_output=True, text=True, timeout=400)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((run_dir / "run.json").read_text())["status"] == "completed"


def test_the_variable_without_the_lock_files_descriptor_counts_for_nothing(tmp_path):
    other = tmp_path / "other.lock"
    other.write_text("")
    with training_machine("q_r1_n1", "B"), open(other) as stray:
        for fd, passed in ((stray.fileno(), (stray.fileno(),)), (stray.fileno() + 50, ())):
            done = subprocess.run([sys.executable, "-m", "sacscale.cli", "train", *ARGS, "--log-dir",
                                   tmp_path / "run"], capture_output=True, text=True, timeout=120, pass_fds=passed,
                                  env={**os.environ, FD_VARIABLE: str(fd)})
            one_line(done, REFUSED)
    assert not (tmp_path / "run").exists()
