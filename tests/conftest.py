"""Suite-wide guard: no test leaks environment variables into the tests after it.

Code under test may set variables in its own process (the render command exports
MUJOCO_GL and PYOPENGL_PLATFORM before MuJoCo is imported, a one-rank probe or training
run exports MASTER_ADDR/MASTER_PORT). Run in the test process, such a variable would be
inherited by every later subprocess: a GL backend whose library is missing then breaks
`import mujoco` in all of them. So every test gets the environment it started with back
(silently: setting them is what that code is for), and a module- or session-scoped
fixture that changes the environment without restoring it is an error at the end of its
module, naming the variables, with the environment put back for the tests after it.
"""

import os

import pytest

# pytest's own per-phase variable, which it sets and clears itself
_IGNORED = {"PYTEST_CURRENT_TEST"}
_SESSION_ENV = dict(os.environ)


def _restore(snapshot: dict) -> None:
    for name in _changed(snapshot):
        if name in snapshot:
            os.environ[name] = snapshot[name]
        else:
            del os.environ[name]


def _changed(snapshot: dict) -> list[str]:
    names = (set(os.environ) | set(snapshot)) - _IGNORED
    return sorted(n for n in names if os.environ.get(n) != snapshot.get(n))


@pytest.fixture(autouse=True)
def _environment_restored_after_each_test():
    snapshot = dict(os.environ)
    yield
    if _changed(snapshot):
        _restore(snapshot)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item, nextitem):
    result = yield
    # A module's own fixtures are finalised by now when the next test is in another module.
    if nextitem is not None and getattr(nextitem, "module", None) is getattr(item, "module", None):
        return result
    changed = _changed(_SESSION_ENV)
    if changed:
        _restore(_SESSION_ENV)
        raise RuntimeError(
            f"{item.nodeid.split('::')[0]} left environment variables changed after its tests: "
            f"{', '.join(changed)} (restore them in the fixture that sets them, e.g. with "
            "pytest.MonkeyPatch.context())")
    return result


def pytest_runtest_logreport(report):
    """With SACSCALE_SKIPPED_LIST=FILE, the node id of every skipped test is appended to
    FILE (one a line): CI reruns exactly those once it has installed the optional system
    packages (`.ci/run`)."""
    path = os.environ.get("SACSCALE_SKIPPED_LIST")
    if path and report.skipped and not hasattr(report, "wasxfail"):
        with open(path, "a") as fh:
            fh.write(report.nodeid + "\n")
