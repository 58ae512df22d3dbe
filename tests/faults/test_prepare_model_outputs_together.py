"""prepare-model writes a model and its record (model.json) that must describe each other.
Before: `--num-envs 20000 --threads 1` was taken (env-bench refuses it: one MuJoCo step that
long is deaf to a stop) and a SIGTERM during the measurement left the .mjb without its
model.json; two prepare-model into one folder at once both exited 0, leaving one's model.json
beside the other's .mjb. Now the per-CPU bound is env-bench's, the model and its record are
placed together at the end (a stop or a failure leaves neither), and the output folder is held
for the whole command: a second one is refused at once, naming the first."""

import os
import signal
import subprocess
import sys
import time

from sacscale.cli import main
from sacscale.commands import prepare_model

LONG = ["--num-envs", "2", "--steps", "1000000"]  # a measurement of many minutes


def _sacscale(*args, **kwargs):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return [sys.executable, "-m", "sacscale", *map(str, args)], {"env": env, **kwargs}


def _start_measuring(out, cwd):
    """A prepare-model into `out` that is measuring: its model is written (placed or not)."""
    cmd, kwargs = _sacscale("prepare-model", "--output-dir", out, *LONG, cwd=cwd)
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **kwargs)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if out.is_dir() and any("g1_walk_flat" in p.name for p in out.iterdir()):
            time.sleep(1)  # the reload and the warm-up: into the measurement
            return proc
        time.sleep(0.1)
    proc.kill()
    raise AssertionError(f"prepare-model did not start measuring: {proc.communicate()[1].decode()}")


def _stop(proc):
    proc.send_signal(signal.SIGTERM)
    try:
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, err.decode()


def test_a_stop_while_measuring_leaves_no_model_without_its_record(tmp_path):
    out = tmp_path / "pm"
    proc = _start_measuring(out, tmp_path)
    rc, err = _stop(proc)
    assert rc == 143, err
    assert err.strip() == "sacscale prepare-model: interrupted (SIGTERM)"
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # neither file, no temporary, no lock, no folder


def test_a_second_prepare_model_into_the_folder_is_refused_at_once(tmp_path):
    out = tmp_path / "pm"
    first = _start_measuring(out, tmp_path)
    try:
        cmd, kwargs = _sacscale("prepare-model", "--output-dir", out, "--num-envs", "2", "--steps", "2", cwd=tmp_path)
        second = subprocess.run(cmd, capture_output=True, text=True, timeout=120, **kwargs)
    finally:
        rc, err = _stop(first)
    assert second.returncode == 2, second.stderr
    assert second.stderr.splitlines() == [
        f"sacscale prepare-model: error: --output-dir {out}: another sacscale command is writing this output "
        f"(pid {first.pid} holds {tmp_path / '.pm.lock'}); nothing was written: run this one once it has finished, "
        "or write it elsewhere"]
    assert rc == 143, err
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_more_envs_a_cpu_than_env_bench_takes_are_refused(tmp_path, capsys):
    cpus = len(os.sched_getaffinity(0))
    assert main(["prepare-model", "--output-dir", str(tmp_path / "pm"), "--num-envs", "20000", "--threads", "1",
                 "--steps", "1"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"sacscale prepare-model: error: --num-envs 20000 at 1 thread(s) on {cpus} CPU(s): 20000 envs a CPU in one "
        "MuJoCo step, past 2048 (about 1.5 s; a stop is acted on only between steps): give fewer envs or more threads")
    assert list(tmp_path.iterdir()) == []


def test_a_model_that_cannot_be_placed_takes_its_record_with_it(tmp_path, g1_mjb, monkeypatch, capsys):
    placed = prepare_model.move_into_place

    def refuse_the_model(tmp, path):
        if path.name == prepare_model.MODEL_FILE:
            raise OSError(5, "Input/output error", str(path))
        placed(tmp, path)

    monkeypatch.setattr(prepare_model, "move_into_place", refuse_the_model)
    out = tmp_path / "pm"
    assert main(["prepare-model", "--output-dir", str(out), "--from-mjb", str(g1_mjb), "--num-envs", "2",
                 "--steps", "1"]) == 2
    assert capsys.readouterr().err.strip() == (f"sacscale prepare-model: error: {out / 'g1_walk_flat.mjb'}: "
                                               "Input/output error")
    assert list(tmp_path.iterdir()) == []
