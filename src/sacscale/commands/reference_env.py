"""`sacscale reference-env --output FILE.json [--python PATH] [--create]`: the reference
trainer's environment (unilab 1.5.2, which pins MuJoCo 3.11: a virtual environment of its
own, never ours), created when asked and missing, and recorded.

With --create and no interpreter at --python, `python3 -m venv` makes the environment
(PATH is DIR/bin/python) and pip installs torch at this environment's version and
envs/reference-requirements.txt into it. The record names the interpreter, every package
of that environment with its version, and the reference's asset folder; the pipeline
keeps it as evidence beside the runs of `trainer: unilab`.

Before pip starts, the requirements file and each local thing it names are judged
(commands._requirements): pip runs a local project's build code as this user. One creation
holds the environment folder's lock (`.<venv>.lock` beside it) until its record is written:
a second --create into it is refused, as is a record of it (or train-reference's start)
taken while it is being made. A creation that fails takes back what it made.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

from sacscale.atomic import write_json
from sacscale.commands import BadInput
from sacscale.commands._inputs import repository_hint
from sacscale.commands._output_lock import holding_outputs
from sacscale.commands._requirements import kind_problem, requirements_problem
from sacscale.commands.train_reference import DEFAULT_PYTHON, environment_being_made, environment_folder
from sacscale.locks import UntrustedLock
from sacscale.pipeline.interpreter_check import interpreter_problem
from sacscale.trainers import unilab
from sacscale.usage import say

REQUIREMENTS = "envs/reference-requirements.txt"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--output", required=True, help="JSON record to write")
    parser.add_argument("--python", default=DEFAULT_PYTHON,
                        help=f"the reference environment's interpreter (default: {DEFAULT_PYTHON})")
    parser.add_argument("--create", action="store_true",
                        help="create the environment when the interpreter is missing (needs the package index)")
    parser.add_argument("--requirements", default=REQUIREMENTS, help=f"what to install (default: {REQUIREMENTS})")


def _torch_pin() -> str:
    """torch at our version (without a local tag such as +cpu), so both environments agree."""
    return "torch==" + importlib.metadata.version("torch").split("+")[0]


def create(python: Path, requirements: str) -> list[list[str]]:
    """Make the environment; returns the commands it ran. The interpreter path must end
    in bin/python (a venv's layout)."""
    if python.parent.name != "bin":
        raise ValueError(f"--python {python}: to create it, give DIR/bin/python (a virtual environment's layout)")
    venv = _venv(python)
    steps = [[sys.executable, "-m", "venv", str(venv)],
             [str(python), "-m", "pip", "install", "--quiet", "--upgrade", "pip"],
             [str(python), "-m", "pip", "install", "--quiet", _torch_pin(), "-r", requirements]]
    for cmd in steps:
        print("sacscale reference-env: " + " ".join(cmd), file=sys.stderr, flush=True)
        done = subprocess.run(cmd)
        if done.returncode != 0:
            raise RuntimeError(f"`{' '.join(cmd)}` exited {done.returncode}")
    return steps


def run(args: argparse.Namespace) -> int:
    python = Path(args.python).absolute()
    t0 = time.time()
    # half made: any other check would name a wrong cause
    try:
        being_made = python.exists() and environment_being_made(python)
    except UntrustedLock as exc:
        raise BadInput(f"--python {python}: {exc}; nothing was read") from None
    if being_made:
        raise BadInput(f"--python {python}: {being_made}; nothing was read: run this one once it has finished")
    # a missing input named by an option (or its repository-relative default): a usage error
    if problem := interpreter_problem(args.python):  # before anything starts it, --create's pip too
        say(f"sacscale reference-env: error: --python {problem}", file=sys.stderr)
        return 2
    if python.exists() and not python.is_file():  # running a folder was named "permission denied"
        say(f"sacscale reference-env: error: --python {python}: not a plain file (a folder, a device?); give "
            "the interpreter, e.g. .venv-ref/bin/python", file=sys.stderr)
        return 2
    if not python.exists() and not args.create:
        say(f"sacscale reference-env: error: --python {python}: no such interpreter; create the environment with "
            f"--create, or python3 -m venv .venv-ref && .venv-ref/bin/pip install torch -r {REQUIREMENTS}"
            + (repository_hint(DEFAULT_PYTHON) if args.python == DEFAULT_PYTHON else ""), file=sys.stderr)
        return 2
    if not python.exists() and python.parent.name != "bin":
        say(f"sacscale reference-env: error: --python {python}: to create it, give DIR/bin/python (a virtual "
            f"environment's layout)", file=sys.stderr)
        return 2
    if not python.exists() and (problem := kind_problem(args.requirements)):
        missing = problem == "no such file" and args.requirements == REQUIREMENTS
        say(f"sacscale reference-env: error: --requirements {args.requirements}: {problem}"
            + (repository_hint(REQUIREMENTS) if missing else ""), file=sys.stderr)
        return 2
    if not python.exists() and (problem := requirements_problem(args.requirements)):  # before pip reads it
        say(f"sacscale reference-env: error: --requirements {args.requirements}: {problem}", file=sys.stderr)
        return 2
    if args.create and not python.exists():
        with holding_outputs(folders=(("--python", _venv(python)),)):  # one creation at a time
            return _recorded(args, python, t0)
    return _recorded(args, python, t0)


@contextmanager
def _undone_on_failure(python: Path, taken_back: list[Path]) -> Iterator[None]:
    """What a creation made is taken back when it fails (pip, or the reference not importable
    from the result) or is stopped: a half-made environment left there has its interpreter,
    so a later run would take it as made. A venv cannot be made elsewhere and renamed into
    place (its scripts name its folder), so it is made in place and removed: the folder
    where this command made it, else (a folder that was there) the interpreter alone, so
    that a later --create makes it again. What was removed is added to `taken_back`."""
    venv = _venv(python)
    made_here = not os.path.lexists(venv)
    try:
        yield
    except BaseException:
        made = venv if made_here else python
        if os.path.lexists(made):
            if made_here:
                shutil.rmtree(made, ignore_errors=True)
            else:
                python.unlink(missing_ok=True)
            taken_back.append(made)
        raise


def _venv(python: Path) -> Path:
    """The environment folder of the interpreter DIR/bin/python: the one --create makes, locks
    and takes back, named as the kernel reaches it (environment_folder)."""
    return environment_folder(python)


def _recorded(args: argparse.Namespace, python: Path, t0: float) -> int:
    """Create the environment where it is still missing, then record it."""
    created: list[list[str]] = []
    making = not python.exists()
    taken_back: list[Path] = []
    try:
        with _undone_on_failure(python, taken_back) if making else nullcontext():
            if making:
                created = create(python, args.requirements)
            info = unilab.package_info(str(python))
    except (ValueError, RuntimeError, unilab.UnilabError) as exc:
        undone = " (the unfinished environment was taken back: a later --create makes it again)" if taken_back else ""
        say(f"sacscale reference-env: error: {exc}{undone}", file=sys.stderr)
        return 1
    record = {"python": args.python, "created": bool(created), "create_commands": created,
              "create_seconds": round(time.time() - t0, 1) if created else None,
              "packages": info["packages"], "assets_root": info["assets_root"],
              "unilab": info["packages"].get("unilab"), "mujoco": info["packages"].get("mujoco")}
    write_json(args.output, record)
    print(f"reference environment {python}: unilab {record['unilab']}, mujoco {record['mujoco']}"
          + (f" (created in {record['create_seconds']} s)" if created else ""))
    return 0
