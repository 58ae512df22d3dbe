"""A command given bad input refuses it before loading the libraries its work needs (torch, MuJoCo,
TensorBoard, pandas, scipy, matplotlib): each took seconds to import, so every refusal took
seconds. Judged by what the refusing process imported, not by a time."""

import json
import os
import subprocess
import sys

import pytest

# each command's refusal of a missing input, and the libraries that must not load for it
CASES = {
    "verify": (["verify", "no-set"], 2, ("pandas", "scipy", "matplotlib", "torch")),
    "aggregate": (["aggregate", "no.json", "--csv", "s.csv", "--json", "s.json"], 2,
                  ("pandas", "scipy", "matplotlib", "torch")),
    "report": (["report", "--run-set", "results/no-set"], 2, ("pandas", "scipy", "matplotlib", "torch")),
    "train": (["train", "--model", "no.mjb", "--iterations", "1"], 2, ("torch", "tensorboard", "mujoco")),
    "evaluate": (["evaluate", "no.pt", "--output", "e.json"], 2, ("torch", "tensorboard", "matplotlib")),
    "learner-bench": (["learner-bench", "--batch", "0"], 2, ("torch",)),
    "probe": (["probe", "correctness", "--devices", "cpu,cpu", "--model", "no.mjb", "--output", "p.json"], 2,
              ("torch", "tensorboard", "mujoco")),
    "env-bench": (["env-bench", "--threads", "0"], 2, ("torch", "mujoco")),
    "solver-study": (["solver-study", "--steps", "0"], 2, ("torch", "mujoco")),
    "prepare-model": (["prepare-model", "--output-dir", "m", "--threads", "8192"], 2, ("torch", "mujoco")),
}
# commands that simulate in their own process: MuJoCo, which refuses to load under a MUJOCO_GL
# it does not know, loaded when the CLI imported their module, and their help was refused
SIMULATING = ("env-bench", "solver-study", "prepare-model")
# the refusal runs as a user's does, in a fresh interpreter; the last line says what was imported
PROGRAM = ("import json, sys; from sacscale.cli import main; rc = main(sys.argv[1:]); "
           "print(json.dumps([rc, sorted(sys.modules)]))")


def _refused(argv, cwd):
    done = subprocess.run([sys.executable, "-c", PROGRAM, *argv], capture_output=True, text=True, timeout=120,
                          cwd=cwd)
    rc, modules = json.loads(done.stdout.strip().splitlines()[-1])
    return rc, {name.split(".")[0] for name in modules}, done.stderr


@pytest.mark.parametrize("command", list(CASES))
def test_a_refused_input_loads_none_of_the_heavy_libraries(command, tmp_path):
    argv, code, kept_out = CASES[command]
    rc, loaded, err = _refused(argv, tmp_path)
    assert rc == code and len(err.strip().splitlines()) == 1, err
    assert not loaded & set(kept_out), sorted(loaded & set(kept_out))


@pytest.mark.parametrize("command", SIMULATING)
def test_a_simulating_command_shows_its_help_under_a_mujoco_gl_mujoco_refuses(command, tmp_path):
    done = subprocess.run([sys.executable, "-m", "sacscale", command, "--help"], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path, env={**os.environ, "MUJOCO_GL": "bogus"})
    assert done.returncode == 0 and done.stdout.startswith(f"usage: sacscale {command}"), done.stderr
