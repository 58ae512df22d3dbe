"""A command given bad input refuses it before loading the libraries its work needs (torch,
TensorBoard, pandas, scipy, matplotlib): each took seconds to import, so every refusal took
seconds. Judged by what the refusing process imported, not by a time."""

import json
import subprocess
import sys

import pytest

# each command's refusal of a missing input, and the libraries that must not load for it
CASES = {
    "verify": (["verify", "no-set"], 1, ("pandas", "scipy", "matplotlib", "torch")),
    "aggregate": (["aggregate", "no.json", "--csv", "s.csv", "--json", "s.json"], 2,
                  ("pandas", "scipy", "matplotlib", "torch")),
    "report": (["report", "--run-set", "results/no-set"], 2, ("pandas", "scipy", "matplotlib", "torch")),
    "train": (["train", "--model", "no.mjb", "--iterations", "1"], 2, ("torch", "tensorboard", "mujoco")),
    "evaluate": (["evaluate", "no.pt", "--output", "e.json"], 2, ("torch", "tensorboard", "matplotlib")),
    "learner-bench": (["learner-bench", "--batch", "0"], 2, ("torch",)),
    "probe": (["probe", "correctness", "--devices", "cpu,cpu", "--model", "no.mjb", "--output", "p.json"], 2,
              ("torch", "tensorboard", "mujoco")),
}
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
