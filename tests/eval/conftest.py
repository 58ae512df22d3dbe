"""The OpenGL backend for the render tests.

MuJoCo and PyOpenGL read MUJOCO_GL / PYOPENGL_PLATFORM from the environment, and the
render code exports them where unset. Set in the test process for good, they would reach
every later subprocess, whose `import mujoco` then fails where that backend's library is
missing. So each test or fixture that renders sets them through a monkeypatch that puts
them back afterwards.

Without a usable backend the render tests skip, naming what to install (OSMesa on a
machine without a GPU: Debian package libosmesa6); with SACSCALE_REQUIRE_GL=1 (CI sets it
once the package is installed) they fail instead.
"""

from __future__ import annotations

import contextlib
import os

import pytest

from sacscale.eval import render as R

GL_VARIABLES = ("MUJOCO_GL", "PYOPENGL_PLATFORM")


@contextlib.contextmanager
def _gl_environment(backend: str):
    """MUJOCO_GL and PYOPENGL_PLATFORM as the render code would export them, restored on exit."""
    with pytest.MonkeyPatch.context() as mp:
        for name in GL_VARIABLES:
            if name in os.environ:
                mp.setenv(name, os.environ[name])  # recorded, so restored if the code changes it
            elif name == "MUJOCO_GL" or backend in R.GL_BACKENDS:
                mp.setenv(name, backend)
        yield


@pytest.fixture(scope="session")
def gl():
    """The usable headless GL backend; skips (or fails where required) without one."""
    backend = R.choose_gl_backend()
    with _gl_environment(backend):
        ok, why = R.gl_status()
    if not ok:
        reason = f"no OpenGL backend for offscreen rendering: {why}"
        if os.environ.get("SACSCALE_REQUIRE_GL") == "1":
            pytest.fail(f"SACSCALE_REQUIRE_GL=1 but {reason}", pytrace=False)
        pytest.skip(f"{reason}; set SACSCALE_REQUIRE_GL=1 to make this a failure")
    return backend


@pytest.fixture(scope="session")
def gl_environment():
    """For fixtures wider than a test: `with gl_environment(gl): ...` renders with the GL
    variables set and restores them on exit."""
    return _gl_environment


@pytest.fixture
def gl_env(gl, monkeypatch):
    """This test's GL variables, set for the backend and put back after it."""
    for name in GL_VARIABLES:
        monkeypatch.setenv(name, os.environ.get(name, gl))
    return gl
