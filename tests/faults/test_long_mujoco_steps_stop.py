"""One MuJoCo call cannot be interrupted: Python runs the stop handler only once it returns.
solver-study stepped all its envs in one call, so `--num-envs 3000` at the iteration bounds ran
one step for minutes, deaf to SIGTERM; env-bench's 20000 envs on one thread held a SIGTERM for
18 s (and 2**20 were allowed). Now solver-study steps its envs in slices of about a second's
work (the same states, bit for bit) and env-bench refuses a call past 2048 envs a CPU."""

import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from sacscale.cli import main
from sacscale.sim import solver_settings
from sacscale.sim import solver_study as ss
from sacscale.sim.step_limits import envs_per_cpu_problem
from sacscale.sim.solver_settings import SolverSetting
from sacscale.task.g1_model import load_model

MAX_SETTING = "iterations=1000,ls_iterations=100,tolerance=0"


def _stderr_until(proc, text: str, timeout: float) -> str:
    """Read proc's stderr (in a thread) until it holds text or timeout passes; the text so far."""
    seen = bytearray()

    def pump():
        while chunk := proc.stderr.read1(4096):
            seen.extend(chunk)

    threading.Thread(target=pump, daemon=True).start()
    deadline = time.monotonic() + timeout
    while text.encode() not in seen and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.1)
    return seen


def test_a_sigterm_ends_solver_study_at_the_bounds_with_many_envs(tmp_path, g1_mjb):
    """3000 envs at the bounds: one step of all of them is minutes of CPU (about 0.05-0.2 s an
    env); the signal comes once the reference's two rollouts are done, inside the setting's."""
    out = tmp_path / "ss.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    cmd = [sys.executable, "-m", "sacscale", "solver-study", "--model", str(g1_mjb), "--num-envs", "3000",
           "--steps", "1", "--repeats", "1", "--setting", MAX_SETTING, "--output", str(out)]
    proc = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        seen = _stderr_until(proc, " 2/", timeout=120)  # the progress bar: the reference's 2 steps done
        assert b" 2/" in seen, seen.decode(errors="replace")
        time.sleep(1)
        proc.send_signal(signal.SIGTERM)
        sent = time.monotonic()
        rc = proc.wait(timeout=60)  # one call before: minutes
        waited = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    time.sleep(0.2)
    assert rc == 143, (rc, waited)
    assert seen.decode(errors="replace").rstrip().endswith("sacscale solver-study: interrupted (SIGTERM)")
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == []


def test_slices_give_the_states_of_one_call(monkeypatch, g1_mjb):
    model = load_model(str(g1_mjb))
    setting = SolverSetting("iterations=20", iterations=20)
    qpos, qvel = ss.initial_states(model, 5, 0)
    controls = ss.control_sequence(model, "random", 5, 3, 0)

    def rolled():
        return ss.rollout(model, setting, qpos, qvel, controls, 1, [3])["checkpoints"][3]

    whole = rolled()
    monkeypatch.setattr(solver_settings, "_SLICE_WORK", 1)  # one env a call
    assert setting.envs_per_call(1) == 1
    sliced = rolled()
    assert np.array_equal(whole["qpos"], sliced["qpos"]) and np.array_equal(whole["qvel"], sliced["qvel"])


def test_a_slice_at_the_bounds_is_a_few_envs_and_the_default_one_call():
    assert SolverSetting("max", iterations=1000, ls_iterations=100).envs_per_call(1) == 18
    assert SolverSetting("max", iterations=1000, ls_iterations=100).envs_per_call(4) == 72
    assert solver_settings.REFERENCE.envs_per_call(1) >= 256  # the study's default envs: one call


@pytest.mark.parametrize("extra, says", [
    (["--num-envs", "20000", "--threads", "1"],
     "--num-envs 20000 at 1 thread(s) on {cpus} CPU(s): 20000 envs a CPU in one MuJoCo step, past 2048 (about 1.5 s; "
     "a stop is acted on only between steps): give fewer envs or more threads"),
    (["--num-envs", "4100", "--threads", "8,2", "--cpu-ids", "0"],
     "--num-envs 4100 at 2 thread(s) on 1 CPU(s): 4100 envs a CPU in one MuJoCo step, past 2048 (about 1.5 s; "
     "a stop is acted on only between steps): give fewer envs or more threads"),
])
def test_env_bench_refuses_a_step_too_long_to_stop(capsys, extra, says):
    cpus = len(os.sched_getaffinity(0))
    assert main(["env-bench", "--no-progress", "--model", "/nonexistent.mjb", *extra]) == 2
    assert capsys.readouterr().err.strip() == "env-bench: " + says.format(cpus=cpus)


def test_env_bench_takes_the_sizes_it_is_run_at():
    assert envs_per_cpu_problem(2048, 1, 1) is None  # docs/benchmarks.md's runs
    assert envs_per_cpu_problem(1 << 20, 512, 512) is None
    assert envs_per_cpu_problem(8192, 4, 16) is None
    assert envs_per_cpu_problem(2049, 1, 1) is not None
    assert envs_per_cpu_problem(8192, 8, 1) is not None  # threads past the CPUs do not share the work
