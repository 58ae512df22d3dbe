"""solver-study took `--setting iterations=１０` (full-width digits, which int() reads) and
recorded that spelling as the setting's label, and `--threads 100000` on a 2-CPU machine
(env-bench refuses past 8192); `--num-envs` had no upper bound. Each is now one line, exit 2."""

import pytest

from sacscale.cli import main

STUDY = ["solver-study", "--num-envs", "2", "--steps", "4", "--no-progress", "--model", "/nonexistent.mjb"]


@pytest.mark.parametrize("extra, says", [
    (["--setting", "iterations=１０"], "bad value '１０' for iterations in 'iterations=１０': a whole number in ASCII "
                                        "digits (0-9)"),
    (["--setting", "ls_iterations=1_0"], "bad value '1_0' for ls_iterations in 'ls_iterations=1_0': a whole number "
                                         "in ASCII digits (0-9)"),
    (["--setting", "tolerance=１e-6"], "bad value '１e-6' for tolerance in 'tolerance=１e-6': a number in ASCII (0-9, "
                                       "e.g. 1e-6)"),
    (["--threads", "100000"], "--threads must be at most 8192 (a thread per CPU; the kernel's most), got 100000"),
    (["--num-envs", "2000000"], "--num-envs must be at most 1048576, got 2000000"),
    (["--num-envs", "1048576", "--steps", "100"], "--num-envs 1048576 x --steps 100 = 104,857,600 env steps a "
     "rollout, past 4,194,304 (its controls and replayed states are held in memory whole): give fewer envs or steps"),
    (["--steps", "1000000000"], "--num-envs 2 x --steps 1000000000 = 2,000,000,000 env steps a rollout, past "
     "4,194,304 (its controls and replayed states are held in memory whole): give fewer envs or steps"),
])
def test_solver_study_refuses(capsys, extra, says):
    assert main([*STUDY, *extra]) == 2
    assert capsys.readouterr().err.strip() == f"solver-study: {says}"
