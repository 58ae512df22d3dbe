"""The machine's training lock and the commands run by hand. Before: only `record-run
--machine-lock` took it, so a `sacscale train` started by hand in another terminal trained
beside a pipeline's measured run on the same CPUs and GPUs, both exited 0 and the set said
nothing. Now `train`, `probe`, `env-bench` and `learner-bench` hold it shared: beside each
other, never beside a measured run (refused in one line, exit 2, nothing made), and a
measured run is refused while one of them holds it, naming it. The trainer record-run starts
inherits record-run's locked descriptor and takes that hold as its own; the variable naming
a descriptor counts only where that descriptor is the lock file itself."""

import json
import os
import subprocess
import sys

from cli_runs import one_line, record_run_with_machine_lock, sacscale
from paused_runs import finished, started_paused
from sacscale.pipeline.machine_lock import FD_VARIABLE, training_machine

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
        assert (f"run q_r1_n1 not started: this machine's training lock is held by a hand-run `sacscale train` "
                f"(pid {first.pid})") in proc.stderr
        assert "a command run by hand is training or measuring on this machine" in proc.stderr
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
