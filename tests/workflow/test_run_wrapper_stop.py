"""`sacscale record-run` stopped by SIGTERM or SIGINT: it stops the trainer's whole process
group (what the trainer started too), sets the attempt aside as interrupted and exits
non-zero, saying which signal it received."""

import json
import signal
import subprocess
import sys
import time

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


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=lambda s: signal.Signals(s).name)
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
    assert wrapper.returncode == 1, err
    assert f"run_training: received {name}; stopping the process group" in err
    assert gone(grandchild)
    (kept,) = (tmp_path / "attic").iterdir()
    assert kept.name.startswith("r.interrupted-")
    record = json.loads((kept / "run.json").read_text())
    assert (record["status"], record["interrupted_by"], record["exit_status"]) == ("interrupted", name,
                                                                                  -signal.SIGTERM)
    assert not record["timed_out"] and not (runs / "r").exists()
