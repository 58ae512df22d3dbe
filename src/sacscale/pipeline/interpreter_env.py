"""A run configuration's environment variables that Python itself reads as it starts
(PYTHONHASHSEED, PYTHONMALLOC, PYTHONHOME, ...): a bad value kills the run's interpreter
before any of our code, when the run starts, with Python's own fatal error. Such an env is
tried at planning time on an interpreter that does nothing."""

from __future__ import annotations

import os
import subprocess
import sys

from sacscale.pipeline.plan_values import PlanError

_TRIED: dict[tuple, str | None] = {}  # one try per distinct env in a process


def _start_problem(env: dict[str, str]) -> str | None:
    key = tuple(sorted(env.items()))
    if key not in _TRIED:
        try:
            done = subprocess.run([sys.executable, "-c", "pass"], env={**os.environ, **env}, capture_output=True,
                                  timeout=60)
        except (OSError, subprocess.SubprocessError) as exc:
            _TRIED[key] = f"cannot start ({exc})"
        else:
            lines = done.stderr.decode(errors="replace").strip().splitlines()
            _TRIED[key] = None if done.returncode == 0 else (lines[0] if lines else f"exit {done.returncode}")
    return _TRIED[key]


def check_interpreter_env(env: dict[str, str], where: str) -> None:
    """PlanError naming `where` when Python does not start with the PYTHON* variables of `env`."""
    python = {k: v for k, v in env.items() if k.startswith("PYTHON")}
    if not python:
        return
    problem = _start_problem(python)
    if problem:
        raise PlanError(f"{where}: Python does not start with {', '.join(sorted(python))} as given "
                        f"({problem[:160]}); fix or leave out the value")
