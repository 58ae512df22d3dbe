"""A run folder is one run's while it trains, new or resumed. Before: only a resume held its
folder's lock (`.<name>.lock` beside it), so `train --resume D` while a NEW run still trained
in D trained on from its checkpoint into D too: two event files in tb/rank0/, both writing
checkpoints/ and train_meta.json. Now a new run holds its --log-dir's lock for its whole
life: a resume of it, a second new run there, and a new run into a folder being resumed
are each refused at once in one line naming the folder and its holder (exit 2), nothing
written. A held lock another user could have written is refused with exit 2 for --log-dir
as for --resume. The first run is stopped at a named function (evidence/paused_sacscale.py)
while the others run: no timing decides.

The trainer's lock is its own file, `.<name>.trainer-lock`, not record-run's `.<name>.lock`.
Before: they were one file, and a trainer took a held one for its own when the pid written
in it was one of its ancestors (record-run's): a pid of another PID namespace (a second
container, a host sharing the file system) with that number let a resume train beside the
run, and every trainer under one record-run passed. Now no pid decides: record-run's
trainer takes its own lock freely, and any second trainer of the folder, in any namespace,
is refused by the kernel's lock. A folder name of 250-255 bytes gets a lock whose name is
cut to fit, with a digest of the name (before: `File name too long`)."""

import fcntl
import json
import os
import shlex
import shutil
import subprocess
import sys
import time

import pytest

from cli_runs import one_line, sacscale
from paused_runs import PAUSED, finished, started_paused
from sacscale.locks import RECORDED_IN_VARIABLE, lock_beside

SMALL = '{"learning_starts": 16, "actor_hidden": [16], "critic_hidden": [16], "num_atoms": 11}'
ARGS = ["--devices", "cpu", "--num-envs", "4", "--batch-size", "16", "--log-every", "1", "--replay-per-env", "16",
        "--num-critic-updates", "1", "--num-actor-updates", "1", "--extra", SMALL, "--no-compile",
        "--sim-threads", "1", "--timeout-s", "120"]
MID_TRAINING = "sacscale.train.rank:save_checkpoint"  # train_meta.json and an event file already there


def files_in(folder):
    return sorted((str(p.relative_to(folder)), p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*"))


def held_by(flag, given, pid, lock, way_out):
    return (f"sacscale train: error: {flag} {given}: another sacscale train is training in this run folder "
            f"(pid {pid} holds {lock}); nothing was started: {way_out}")


def test_a_folder_a_new_run_trains_in_is_refused_to_a_resume_and_to_another_new_run(tmp_path):
    run, lock = tmp_path / "run", tmp_path / ".run.trainer-lock"
    first = started_paused(tmp_path, MID_TRAINING, "train", *ARGS, "--iterations", "2", "--checkpoint-every", "1",
                           "--log-dir", run)
    before = files_in(run)
    assert (run / "train_meta.json").is_file() and len(list((run / "tb" / "rank0").iterdir())) == 1
    one_line(sacscale("train", "--resume", run, "--iterations", "4"),
             held_by("--resume", run, first.pid, lock, "resume it once that one has ended"))
    one_line(sacscale("train", *ARGS, "--iterations", "2", "--log-dir", run),
             held_by("--log-dir", run, first.pid, lock, "choose a new directory"))
    (tmp_path / "alias").symlink_to(run)
    one_line(sacscale("train", "--resume", tmp_path / "alias", "--iterations", "4"), f"(pid {first.pid} holds {lock})")
    assert files_in(run) == before  # nothing written by the refused ones
    done = finished(tmp_path, first)
    assert done.returncode == 0, done.stderr
    assert json.loads((run / "train_meta.json").read_text())["status"] == "completed"
    assert len(list((run / "tb" / "rank0").iterdir())) == 1
    assert not lock.exists()


LONG_NAMES = ["r" * 250, "r" * 255, "é" * 127]


@pytest.fixture(scope="module")
def trained_long_named(tmp_path_factory):
    """name -> a folder of that name holding a finished 2-iteration run, trained on first
    use and kept for the module: the long-name test reads it, the resume test copies one."""
    made = {}

    def trained(name):
        if name not in made:
            run = tmp_path_factory.mktemp("long") / name
            done = sacscale("train", *ARGS, "--iterations", "2", "--log-dir", run)
            assert done.returncode == 0, done.stderr
            made[name] = run
        return made[name]

    return trained


def test_a_new_run_into_a_folder_being_resumed_is_refused(tmp_path, trained_long_named):
    run, lock = tmp_path / "run", tmp_path / ".run.trainer-lock"
    shutil.copytree(trained_long_named(LONG_NAMES[0]), run, symlinks=True)
    first = started_paused(tmp_path, "sacscale.train.job:run_training", "train", "--resume", run,
                           "--iterations", "3")
    before = files_in(run)
    one_line(sacscale("train", *ARGS, "--iterations", "2", "--log-dir", run),
             held_by("--log-dir", run, first.pid, lock, "choose a new directory"))
    assert files_in(run) == before
    assert finished(tmp_path, first).returncode == 0


# as record-run holds the work folder's lock and names that folder to the command it starts
HOLD_AND_RUN = ("import os, subprocess, sys; from pathlib import Path\n"
                "from sacscale.locks import RECORDED_IN_VARIABLE, lock_beside\n"
                "with lock_beside(Path(sys.argv[1])):\n"
                "    env = dict(os.environ, **{RECORDED_IN_VARIABLE: os.path.realpath(sys.argv[1])})\n"
                "    sys.exit(subprocess.run(sys.argv[2:], env=env).returncode)")


def test_record_runs_lock_of_the_folder_is_not_the_trainers(tmp_path):
    run = tmp_path / "run"  # as record-run holds the work folder while its trainer runs there
    done = subprocess.run([sys.executable, "-c", HOLD_AND_RUN, run, sys.executable, "-m", "sacscale.cli", "train",
                           *ARGS, "--iterations", "1", "--log-dir", run], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert (run / "train_meta.json").is_file() and not (tmp_path / ".run.trainer-lock").exists()


def test_a_second_trainer_under_the_holder_of_record_runs_lock_is_refused(tmp_path, monkeypatch):
    """Both trainers descend from the process holding `.run.lock` (as two trainers a command
    wrapped by record-run starts): the second is refused, as any other second trainer."""
    run, lock = tmp_path / "run", tmp_path / ".run.trainer-lock"
    monkeypatch.setenv(RECORDED_IN_VARIABLE, os.path.realpath(run))  # as record-run names its work folder
    with lock_beside(run):
        first = started_paused(tmp_path, MID_TRAINING, "train", *ARGS, "--iterations", "2", "--checkpoint-every",
                               "1", "--log-dir", run)
        before = files_in(run)
        one_line(sacscale("train", "--resume", run, "--iterations", "4"),
                 held_by("--resume", run, first.pid, lock, "resume it once that one has ended"))
        assert files_in(run) == before
        assert finished(tmp_path, first).returncode == 0


def in_a_pid_namespace(argv, depth):
    """argv run `depth` shells deep in a new PID namespace (its shell is pid 1 there), each
    shell waiting for the next so that pids 1..depth are its parents."""
    line = shlex.join(argv)
    for _ in range(depth):
        line = f"sh -c {shlex.quote(line + '; exit $?')}"
    return ["unshare", "-pf", "--kill-child", "--mount-proc", *shlex.split(line)]


def _namespaces_work():
    return os.geteuid() == 0 and subprocess.run(["unshare", "-pf", "--mount-proc", "true"],
                                                capture_output=True).returncode == 0


@pytest.mark.skipif(not _namespaces_work(), reason="needs root and unshare -p (PID namespaces)")
def test_a_resume_in_another_pid_namespace_is_refused_whatever_pid_the_lock_names(tmp_path):
    """The first trainer is pid 2 of its namespace (the lock says `pid 2`); the resume runs
    in a second namespace where pid 2 is its grandparent: a pid-based rule took that for
    its own holder and trained beside the first."""
    run, lock = tmp_path / "run", tmp_path / ".run.trainer-lock"
    env = dict(os.environ, PAUSE_AT=MID_TRAINING, PAUSE_MARKER=str(tmp_path / "paused"), PAUSE_GO=str(tmp_path / "go"))
    first = subprocess.Popen(in_a_pid_namespace([sys.executable, str(PAUSED), "train", *ARGS, "--iterations", "2",
                                                 "--checkpoint-every", "1", "--log-dir", str(run)], 1),
                             env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not (tmp_path / "paused").exists():
            assert first.poll() is None, first.communicate()
            assert time.monotonic() < deadline, "the first trainer never reached its pause"
            time.sleep(0.05)
        (says,) = [held.read_text() for held in tmp_path.glob(".run.*lock")]  # the first's, by any name
        assert says.split() == ["pid", "2"]
        before = files_in(run)
        resume = [sys.executable, "-m", "sacscale.cli", "train", "--resume", str(run), "--iterations", "4"]
        done = subprocess.run(in_a_pid_namespace(resume, 2), capture_output=True, text=True, timeout=120)
        one_line(done, held_by("--resume", run, 2, lock, "resume it once that one has ended"))
        assert files_in(run) == before
        assert finished(tmp_path, first).returncode == 0
    finally:
        first.kill()
        first.wait()


@pytest.mark.parametrize("name", LONG_NAMES)
def test_a_run_folder_of_a_long_legal_name_is_held_and_trained_in(trained_long_named, name):
    run = trained_long_named(name)
    assert json.loads((run / "train_meta.json").read_text())["status"] == "completed"
    assert sorted(p.name for p in run.parent.iterdir()) == [name]  # its lock removed


@pytest.fixture()
def untrusted_lock(tmp_path):
    """A held lock beside `run` that other users may write: no holder's word."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "train_meta.json").write_text("{}")
    lock = tmp_path / ".run.trainer-lock"
    lock.write_text("pid 1\n")
    lock.chmod(0o666)
    fd = os.open(lock, os.O_RDWR)
    fcntl.flock(fd, fcntl.LOCK_EX)
    yield run, lock
    os.close(fd)


UNTRUSTED = ": is writable by other users (mode 0666); it is held, but not as a lock of this user's sacscale"


def test_an_untrusted_lock_refuses_a_log_dir_inside_the_folder_with_exit_2_as_a_resume(untrusted_lock):
    run, lock = untrusted_lock
    one_line(sacscale("train", "--resume", run, "--iterations", "4"),
             f"--resume {run}: cannot hold the run folder for this sitting (lock file {lock}{UNTRUSTED}")
    one_line(sacscale("train", *ARGS, "--iterations", "2", "--log-dir", run / "sub"),
             f"sacscale train: error: --log-dir {run}/sub: lock file {lock}{UNTRUSTED}")
    one_line(sacscale("train", *ARGS, "--iterations", "2", "--log-dir", run),
             f"--log-dir {run}: cannot hold the run folder for this sitting (lock file {lock}{UNTRUSTED}")
    assert sorted(p.name for p in run.iterdir()) == ["train_meta.json"]  # nothing made there


# the refusal as a user meets it, in a fresh interpreter; the last line says whether torch loaded
LOADS_TORCH = ("import json, sys; from sacscale.cli import main; rc = main(sys.argv[1:]); "
               "print(json.dumps([rc, 'torch' in sys.modules]))")


def test_a_new_run_refused_its_held_folder_answers_without_loading_torch(untrusted_lock):
    """The learner's settings are checked before the folder is held, and they loaded torch
    (seconds) for dtype names: every refused new run waited for it."""
    run, lock = untrusted_lock
    done = subprocess.run([sys.executable, "-c", LOADS_TORCH, "train", *ARGS, "--iterations", "2", "--log-dir", run],
                          capture_output=True, text=True, timeout=120)
    assert f"--log-dir {run}: cannot hold the run folder" in done.stderr, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == [2, False]
