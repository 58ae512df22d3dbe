"""A run configuration's environment variables that decide whether its trainer starts at
all: PATH, where the run wrapper looks the trainer's command up, and those Python itself
reads as it starts (PYTHONHASHSEED, PYTHONMALLOC, PYTHONHOME, ...), where a bad value kills
the interpreter before any of our code with Python's own fatal error. Either would fail
only when the run starts (after the model, the probe and the runs before it), so they are
tried at planning time: the command looked up on that PATH, an interpreter that does
nothing started with those variables."""

from __future__ import annotations

import os
import shutil
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


def _warnings_problem(value: str) -> str | None:
    """A PYTHONWARNINGS filter whose action is `error` (or any prefix Python accepts for it,
    `e`, `err`): Python starts, then the first warning a library gives (a deprecation in
    torch or gymnasium) ends the run, after the model and the probe."""
    for spec in value.split(","):
        action = spec.split(":", 1)[0].strip().lower()
        if action and "error".startswith(action):
            return f"its filter {spec.strip()[:60]!r} makes every matching warning an error that would end the run"
    return None


def check_interpreter_env(env: dict[str, str], where: str, command: str = "sacscale") -> None:
    """PlanError naming `where` when the run's `command` is not on the PATH `env` gives, or
    Python does not start with the PYTHON* variables of `env`."""
    if "PATH" in env and shutil.which(command, path=env["PATH"]) is None:
        raise PlanError(f"{where}: PATH {env['PATH'][:80]!r} does not hold {command!r}, the trainer's command: "
                        "the run could not start; leave PATH out or add the folder that holds it")
    if "PYTHONWARNINGS" in env and (problem := _warnings_problem(env["PYTHONWARNINGS"])):
        raise PlanError(f"{where}: PYTHONWARNINGS: {problem}; leave it out, or use 'ignore' / 'default' actions")
    python = {k: v for k, v in env.items() if k.startswith("PYTHON")}
    if not python:
        return
    problem = _start_problem(python)
    if problem:
        raise PlanError(f"{where}: Python does not start with {', '.join(sorted(python))} as given "
                        f"({problem[:160]}); fix or leave out the value")
