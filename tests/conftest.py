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

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

# Under pytest-xdist (`-n 2`) every worker is a process of its own that imports this
# module again, with the environment of the controller that started it (which imported it
# first). Folders made here are removed by the process that made them.
_XDIST_WORKER = "PYTEST_XDIST_WORKER" in os.environ
_MADE: list[str] = []


def _session_folder(prefix: str) -> str:
    path = tempfile.mkdtemp(prefix=prefix)
    os.chmod(path, 0o700)
    _MADE.append(path)
    return path


# The session's own lock folder (SACSCALE_LOCK_DIR, inherited by every process it starts,
# those of session- and module-scoped fixtures included): the pipeline's machine-wide
# training lock would otherwise be shared with every other
# test session and pipeline of this user on this machine. Each xdist worker has its own:
# the machine lock refuses a second pipeline at once, and two workers' pipelines may train
# side by side. Set before the snapshot below, so it is part of the environment every test
# starts with.
os.environ["SACSCALE_LOCK_DIR"] = _session_folder("sacscale-test-locks-")
# The machine lock follows its own setting only (sacscale.pipeline.machine_lock): the session's folder too.
os.environ["SACSCALE_MACHINE_LOCK_DIR"] = os.environ["SACSCALE_LOCK_DIR"]

# torch.compile exports TORCHINDUCTOR_CACHE_DIR (its default folder) into os.environ the
# first time it compiles, which the guard below would report as a change left behind by
# whichever module compiled first. Set once for the whole run instead (the xdist workers
# inherit the controller's, so they share one compile cache), unless the caller chose one.
if "TORCHINDUCTOR_CACHE_DIR" not in os.environ:
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = _session_folder("sacscale-test-inductor-")

# setuptools loaded before any test imports pip (the requirements tests read files with pip's
# own parser): under Python < 3.12, importing pip turns setuptools' own distutils off for the
# process, and setuptools imported afterwards (torch.compile's C++ build does) then fails its
# check that distutils is its own; loaded first, it is not imported again.
with contextlib.suppress(ImportError):
    import setuptools  # noqa: F401

# One OpenMP thread per process by default, the test process's subprocesses included
# (the probe's spawned ranks, torchrun's, Snakemake's jobs): a thread per core in each of
# them oversubscribes the 2 cores two xdist workers share, and small tensor ops then wait
# on descheduled threads (measured: the probe's four mutation tests 52 s -> 34 s). Code
# that needs more threads sets its own count (the trainer's ranks, the collectors); what
# the tests check does not depend on it. Unless the caller chose a value.
os.environ.setdefault("OMP_NUM_THREADS", "1")

# pytest's own per-phase variable, which it sets and clears itself
_IGNORED = {"PYTEST_CURRENT_TEST"}
_SESSION_ENV = dict(os.environ)


def pytest_unconfigure(config):
    for path in _MADE:
        shutil.rmtree(path, ignore_errors=True)


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
def _one_torch_thread_in_the_test_process():
    """Torch in the test process computes on one thread (OMP_NUM_THREADS above), again
    before every test: code run in the test process that sets its own count (the trainer's
    ranks, evaluate, render) would otherwise leave it to the tests after it (measured:
    test_learning_state.py beside two busy processes 11 s -> 6 s with one thread)."""
    torch = sys.modules.get("torch")  # imported by collection wherever a test uses it
    if torch is not None:
        torch.set_num_threads(1)
    yield


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


def _declared_limit(item) -> float:
    """The test's own pytest-timeout limit (0 where it keeps the default): a test that
    declares a longer one is expected to take longer."""
    marker = item.get_closest_marker("timeout")
    if marker is None:
        return 0.0
    return float(marker.kwargs.get("timeout", marker.args[0] if marker.args else 0))


def _file_order(tests: list) -> tuple:
    slow = any(t.get_closest_marker("slow") for t in tests)
    return (not slow, -max(map(_declared_limit, tests)))


def pytest_collection_modifyitems(config, items):
    """Files with `slow` tests first (the longest declared limit first), each file's tests
    together and in order. pytest-xdist's `--dist loadfile --no-loadscope-reorder` (the
    README's command) hands out files in this order: the long end-to-end files start at
    once and the many short ones fill in beside them, instead of one long file running
    alone at the end."""
    by_file: dict = {}
    for item in items:
        by_file.setdefault(item.path, []).append(item)
    items[:] = [item for tests in sorted(by_file.values(), key=_file_order) for item in tests]


def pytest_runtest_logreport(report):
    """With SACSCALE_SKIPPED_LIST=FILE, the node id of every skipped test is appended to
    FILE (one a line): CI reruns exactly those once it has installed the optional system
    packages (`.ci/run`)."""
    path = os.environ.get("SACSCALE_SKIPPED_LIST")
    # under xdist the controller receives every worker's reports: it alone writes the list
    if path and not _XDIST_WORKER and report.skipped and not hasattr(report, "wasxfail"):
        with open(path, "a") as fh:
            fh.write(report.nodeid + "\n")


# ---- the OpenGL backend, for the tests that render ---------------------------------------
# MuJoCo and PyOpenGL read MUJOCO_GL / PYOPENGL_PLATFORM from the environment, and the
# render code exports them where unset; a test or fixture that renders sets them through a
# monkeypatch that puts them back afterwards. Without a usable backend those tests skip,
# naming what to install (OSMesa on a machine without a GPU: Debian package libosmesa6);
# with SACSCALE_REQUIRE_GL=1 (CI sets it once the package is installed) they fail instead.

GL_VARIABLES = ("MUJOCO_GL", "PYOPENGL_PLATFORM")


@contextlib.contextmanager
def _gl_environment(backend: str):
    """MUJOCO_GL and PYOPENGL_PLATFORM as the render code would export them (and its shader cache
    switches), restored on exit."""
    from sacscale.eval import gl_backend as R

    with pytest.MonkeyPatch.context() as mp:
        for name in GL_VARIABLES:
            if name in os.environ:
                mp.setenv(name, os.environ[name])  # recorded, so restored if the code changes it
            elif name == "MUJOCO_GL" or backend in R.GL_BACKENDS:
                mp.setenv(name, backend)
        for name, off in R.SHADER_CACHE_OFF.items():  # configure_gl_backend sets these: restored on exit
            mp.setenv(name, os.environ.get(name, off))
        yield


_gl_status: list[tuple[bool, str]] = []


def gl_usable() -> tuple[bool, str]:
    """(True, backend) where a tiny scene renders offscreen here, else (False, why); once a session."""
    if not _gl_status:
        import mujoco  # noqa: F401  before the GL variables: with them, a missing library breaks the import

        from sacscale.eval import gl_backend as R

        backend = R.choose_gl_backend()
        with _gl_environment(backend):
            try:
                ok, why = R.gl_status()
            except Exception as exc:  # noqa: BLE001 - any failure to render is a reason to skip
                ok, why = False, f"{type(exc).__name__}: {exc}"
        _gl_status.append((ok, backend if ok else why))
    return _gl_status[0]


@pytest.fixture(scope="session")
def gl():
    """The usable headless GL backend; skips (or fails where required) without one."""
    ok, why = gl_usable()
    if not ok:
        reason = f"no OpenGL backend for offscreen rendering: {why}"
        if os.environ.get("SACSCALE_REQUIRE_GL") == "1":
            pytest.fail(f"SACSCALE_REQUIRE_GL=1 but {reason}", pytrace=False)
        pytest.skip(f"{reason}; set SACSCALE_REQUIRE_GL=1 to make this a failure")
    return why


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


@pytest.fixture(scope="session")
def gl_available():
    """(True, backend) or (False, why), for a fixture that renders only where it can."""
    return gl_usable()


# ---- the CLI, run in the test process ----------------------------------------------------

@pytest.fixture
def sacscale_main(capsys, monkeypatch):
    """`sacscale ARGS` run in this process, from `cwd` where given: its exit status and
    output as a subprocess would give them, without a second of imports each time. (An
    exception that main() lets through fails the test, as a traceback in a subprocess's
    output would.) Not for a command that records the interpreter itself (verify-env:
    the test process's sys.path shows distributions a fresh one does not)."""
    from sacscale.cli import main

    def run(*args: str, cwd=None) -> subprocess.CompletedProcess:
        with monkeypatch.context() as mp:
            if cwd is not None:
                mp.chdir(cwd)
            capsys.readouterr()
            try:
                code = main([str(a) for a in args])
            except SystemExit as exc:  # argparse's usage errors
                code = exc.code
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(["sacscale", *args], code, out, err)

    return run


@pytest.fixture
def pip_calls(monkeypatch):
    """reference-env's `create` stood in for: no venv, no pip; what it was given is kept."""
    from sacscale.commands import reference_env

    calls = []

    def fake_create(python, requirements):
        calls.append(requirements)
        raise RuntimeError("pip stood in for")
    monkeypatch.setattr(reference_env, "create", fake_create)
    return calls
