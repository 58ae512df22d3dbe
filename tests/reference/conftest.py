"""Differential tests against the reference implementation, PyPI unilab==1.5.2.

The reference pins MuJoCo 3.11, so it lives in a virtual environment of its own (made by
`.ci/run`: `.venv-ref`, or the interpreter named by SACSCALE_REFERENCE_PYTHON). Its side
runs as a worker script in that interpreter; requests and answers travel as .npz files.
Without that environment these tests are skipped with the reason, not failed."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from sacscale.task import g1_model as g1
from sacscale.task.g1_model import build_g1_model

HERE = Path(__file__).parent
REPO = HERE.parents[1]
INSTALL_HINT = (
    "python3 -m venv .venv-ref && .venv-ref/bin/pip install torch==2.13.0 'unilab[mujoco]==1.5.2' "
    "(or point SACSCALE_REFERENCE_PYTHON at an interpreter that has it)"
)


def _reference_python() -> str | None:
    named = os.environ.get("SACSCALE_REFERENCE_PYTHON")
    if named:
        return named
    default = REPO / ".venv-ref" / "bin" / "python"
    return str(default) if default.exists() else None


def _unavailable(reason: str):
    """Skip, or fail where the reference is required (CI sets SACSCALE_REQUIRE_REFERENCE=1,
    so a broken install cannot pass as a green run with these tests skipped)."""
    if os.environ.get("SACSCALE_REQUIRE_REFERENCE") == "1":
        pytest.fail(f"SACSCALE_REQUIRE_REFERENCE=1 but {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def reference_python() -> str:
    python = _reference_python()
    if python is None:
        _unavailable(f"the reference (unilab 1.5.2) is not installed; to run these tests: {INSTALL_HINT}")
    try:
        probe = subprocess.run(
            [python, "-c", "import unilab, mujoco; print(mujoco.__version__)"],
            capture_output=True, text=True, timeout=300,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        _unavailable(f"{python} cannot run the reference ({exc}); {INSTALL_HINT}")
    if probe.returncode != 0:
        _unavailable(f"{python} cannot import the reference: {probe.stderr.strip()[-300:]}; {INSTALL_HINT}")
    return python


@pytest.fixture(scope="session")
def g1_assets() -> str:
    return str(g1.asset_dir() / "assets")


@pytest.fixture(scope="session")
def ours():
    return build_g1_model()


@pytest.fixture(scope="session")
def run_reference(reference_python, g1_assets, tmp_path_factory):
    """run_reference(worker, op, **arrays) -> dict of the worker's answer arrays."""
    counter = iter(range(10**6))

    def run(worker: str, op: str, timeout: float = 600, **arrays) -> dict:
        d = tmp_path_factory.mktemp(f"ref_{op}_{next(counter)}")
        req, out = d / "request.npz", d / "answer.npz"
        np.savez(req, op=np.array(op), asset_dir=np.array(g1_assets), **arrays)
        # the reference's own environment only: none of ours leaks in through PYTHONPATH
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
        proc = subprocess.run(
            [reference_python, str(HERE / worker), str(req), str(out)],
            capture_output=True, text=True, timeout=timeout, env=env,
        )
        if proc.returncode != 0:
            raise AssertionError(f"{worker} {op} failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
        with np.load(out, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}

    return run

