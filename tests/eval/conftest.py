"""The render commands export MUJOCO_GL and PYOPENGL_PLATFORM into the process (they must,
before MuJoCo is imported). In a test session that environment would reach every later
test's subprocesses (a pipeline's `sacscale verify` then imports OpenGL for a backend this
machine may not have): each module here gives both back as it found them."""

import os

import pytest

GL_VARIABLES = ("MUJOCO_GL", "PYOPENGL_PLATFORM")


@pytest.fixture(autouse=True, scope="module")
def gl_environment_given_back():
    saved = {name: os.environ.get(name) for name in GL_VARIABLES}
    yield
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
