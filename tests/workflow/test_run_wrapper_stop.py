"""`sacscale record-run` stopped by SIGTERM, SIGINT or SIGHUP (a closed terminal): it stops the trainer's whole process
group (what the trainer started too), sets the attempt aside as interrupted and ends as
every stopped command does: `sacscale record-run: interrupted (SIGTERM)`, exit 143; a
Ctrl-C's line, then killed by SIGINT."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

# A stand-in trainer that starts a process of its own, says both pids, and waits.
TRAINER = ("import subprocess, sys, time\n"
           "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
           "print('pids', child.pid, flush=True)\n"
           "time.sleep(60)\n")


def gone(pid: int, within_s: float = 10.0) -> bool:
    """Whether `pid` ends within `within_s`: no /proc entry, or a zombie its new parent reaps."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as fh:
                stat = fh.read()
        except OSError:
            return True
        if stat[stat.rindex(")") + 2 :][:1] == "Z":
            return True
        time.sleep(0.02)
    return False


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP], ids=lambda s: signal.Signals(s).name)
def test_a_stop_signal_ends_the_trainers_group_and_sets_the_attempt_aside(tmp_path, sig):
    runs = tmp_path / "runs"
    cmd = [sys.executable, "-m", "sacscale.cli", "record-run", "--run-dir", str(runs / "r"),
           "--work-dir", str(runs / ".r.partial"), "--attic", str(tmp_path / "attic"), "--timeout", "60",
           "--", sys.executable, "-c", TRAINER]
    wrapper = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = wrapper.stdout.readline()
        assert line.startswith("pids "), line
        grandchild = int(line.split()[1])
        wrapper.send_signal(sig)
        _, err = wrapper.communicate(timeout=60)
    finally:
        wrapper.kill()
    name = signal.Signals(sig).name
    assert wrapper.returncode == (128 + sig if sig != signal.SIGINT else -signal.SIGINT), err
    assert err.splitlines()[-1] == f"sacscale record-run: interrupted ({name})", err
    assert f"run_training: received {name}; stopping the process group" in err
    assert gone(grandchild)
    (kept,) = (tmp_path / "attic").iterdir()
    assert kept.name.startswith("r.interrupted-")
    record = json.loads((kept / "run.json").read_text())
    assert (record["status"], record["interrupted_by"], record["exit_status"]) == ("interrupted", name,
                                                                                  -signal.SIGTERM)
    assert not record["timed_out"] and not (runs / "r").exists()


def test_the_wrapper_as_a_script_ends_a_stop_with_its_own_line(tmp_path):
    """workflow/scripts/run_training.py, the same wrapper without the CLI around it."""
    runs = tmp_path / "runs"
    script = Path(__file__).resolve().parents[2] / "workflow" / "scripts" / "run_training.py"
    cmd = [sys.executable, str(script), "--run-dir", str(runs / "r"), "--work-dir", str(runs / ".r.partial"),
           "--attic", str(tmp_path / "attic"), "--timeout", "60", "--", sys.executable, "-c", TRAINER]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    wrapper = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert wrapper.stdout.readline().startswith("pids ")
        wrapper.send_signal(signal.SIGTERM)
        _, err = wrapper.communicate(timeout=60)
    finally:
        wrapper.kill()
    assert wrapper.returncode == 143, err
    assert err.splitlines()[-1] == "run_training: interrupted (SIGTERM)", err
    assert [kept.name[:14] for kept in (tmp_path / "attic").iterdir()] == ["r.interrupted-"]


def test_a_hangup_ignored_when_the_wrapper_started_leaves_the_run_going(tmp_path):
    """Under `nohup` SIGHUP stays ignored: the run was started to outlive its terminal."""
    runs = tmp_path / "runs"
    trainer = "import time; print('started', flush=True); time.sleep(1.5)"
    cmd = [sys.executable, "-m", "sacscale.cli", "record-run", "--run-dir", str(runs / "r"),
           "--work-dir", str(runs / ".r.partial"), "--attic", str(tmp_path / "attic"), "--timeout", "60",
           "--", sys.executable, "-c", trainer]
    ignore_hangup = lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN)  # noqa: E731
    wrapper = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=ignore_hangup)
    try:
        assert wrapper.stdout.readline() == "started\n"
        wrapper.send_signal(signal.SIGHUP)
        _, err = wrapper.communicate(timeout=60)
    finally:
        wrapper.kill()
    assert "received SIGHUP" not in err and "interrupted" not in err, err
    assert wrapper.returncode == 1, err  # the stand-in wrote no event file: a failed run, not a stopped one
