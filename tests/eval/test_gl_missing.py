"""The renderer without its OpenGL backend, as a user meets it: a fresh `sacscale` process
whose backend library is missing. MuJoCo's own import then fails with an AttributeError
deep in PyOpenGL; we name the package instead (exit 2, no file), or fall back to the other
headless backend when the backend was our choice, not MUJOCO_GL's.

The end-to-end cases hide the system's libraries in a private mount namespace (an empty
file bound over each; `unshare -m`, root only) and are skipped elsewhere; the unit cases
point the probe at a library that does not exist and run everywhere."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sacscale.cli import main
from sacscale.eval import gl_backend as GL

HERE = Path(__file__).resolve().parent
LIBDIR = Path("/lib/x86_64-linux-gnu")
RENDER = ["render", "run", "--output", "videos/walk.webp", "--seconds", "0.2", "--width", "32", "--height", "24",
          "--fps", "10"]


def _can_unshare() -> bool:
    return shutil.which("unshare") is not None and subprocess.run(
        ["unshare", "-m", "true"], capture_output=True).returncode == 0


def _hidden_run(tmp_path, hide: list[str], mujoco_gl: str | None, argv: list[str]):
    """`sacscale ARGV` in tmp_path, fresh process, with LIBDIR/<prefix>* of each `hide`
    replaced by an empty file in a private mount namespace."""
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    libs = [str(f) for prefix in hide for f in sorted(LIBDIR.glob(prefix + "*")) if f.is_file()]
    if not libs:
        pytest.skip(f"no {hide} in {LIBDIR} to hide")
    mounts = "".join(f"mount --bind {empty} {lib} && " for lib in libs)
    cli = " ".join([sys.executable, "-m", "sacscale.cli", *argv])
    env = {k: v for k, v in os.environ.items() if k not in ("MUJOCO_GL", "PYOPENGL_PLATFORM", "SACSCALE_TRACEBACK")}
    if mujoco_gl is not None:
        env["MUJOCO_GL"] = mujoco_gl
    return subprocess.run(["unshare", "-m", "--propagation", "private", "bash", "-c", mounts + cli], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture
def run_dir(tmp_path):
    sys.path.insert(0, str(HERE))
    try:
        from test_render import make_checkpoint
    finally:
        sys.path.remove(str(HERE))
    make_checkpoint(tmp_path / "run" / "checkpoints" / "final.pt")
    (tmp_path / "videos").mkdir()
    return tmp_path


needs_root = pytest.mark.skipif(not _can_unshare(), reason="needs root for a private mount namespace (unshare -m)")


@needs_root
@pytest.mark.parametrize("backend, hide, package", [("osmesa", "libOSMesa", "libosmesa6"),
                                                     ("egl", "libEGL", "libegl1")])
def test_a_missing_backend_library_is_one_line_naming_the_package(run_dir, backend, hide, package):
    proc = _hidden_run(run_dir, [hide], backend, RENDER)
    err = proc.stderr.strip()
    assert proc.returncode == 2, (proc.returncode, err)
    assert "\n" not in err and "Traceback" not in err, err
    assert err.startswith(f"sacscale render: error: MUJOCO_GL={backend}: {hide} cannot be loaded"), err
    assert f"apt-get install -y {package}" in err, err
    assert list((run_dir / "videos").iterdir()) == []


@needs_root
def test_a_command_that_only_imports_mujoco_names_the_package_too(run_dir):
    """MUJOCO_GL set in the user's environment breaks `import mujoco` for every command."""
    proc = _hidden_run(run_dir, ["libEGL"], "egl", ["evaluate", "run", "--output", "e.json"])
    err = proc.stderr.strip()
    assert proc.returncode == 2 and "\n" not in err and "Traceback" not in err, (proc.returncode, err)
    assert err.startswith("sacscale evaluate: error: MUJOCO_GL=egl: libEGL cannot be loaded"), err
    assert not (run_dir / "e.json").exists()


@needs_root
def test_our_choice_falls_back_to_the_other_backend(run_dir, gl):
    proc = _hidden_run(run_dir, ["libOSMesa"], None, RENDER)
    assert proc.returncode == 0, proc.stderr
    assert "MUJOCO_GL=egl" in proc.stdout
    assert [p.name for p in (run_dir / "videos").iterdir()] == ["walk.webp"]


@needs_root
def test_neither_backend_names_both_packages(run_dir):
    proc = _hidden_run(run_dir, ["libOSMesa", "libEGL"], None, RENDER)
    err = proc.stderr.strip()
    assert proc.returncode == 2 and "\n" not in err, (proc.returncode, err)
    assert "no headless OpenGL backend here" in err and "libosmesa6" in err and "libegl1" in err, err
    assert list((run_dir / "videos").iterdir()) == []


def test_the_probe_names_a_library_that_does_not_load(monkeypatch):
    monkeypatch.setitem(GL.GL_LIBRARIES, "osmesa", ((("sacscale-no-such-gl",), "OSMesaCreateContextExt"),))
    why = GL.library_problem("osmesa")
    assert why.startswith("libsacscale-no-such-gl cannot be loaded") and "apt-get install -y libosmesa6" in why
    assert GL.library_problem("glfw") is None  # a backend with a display is not probed


def test_the_probe_names_pyopengl_when_it_is_missing(monkeypatch):
    real = GL.importlib.util.find_spec
    monkeypatch.setattr(GL.importlib.util, "find_spec", lambda name: None if name == "OpenGL" else real(name))
    assert "pip install PyOpenGL" in GL.library_problem("egl")


def test_an_explicit_backend_is_not_replaced(monkeypatch):
    """MUJOCO_GL is the user's choice: refused with the package named, not silently swapped."""
    monkeypatch.setenv("MUJOCO_GL", "osmesa")
    monkeypatch.setitem(GL.GL_LIBRARIES, "osmesa", ((("sacscale-no-such-gl",), "x"),))
    with pytest.raises(GL.GLBackendError, match=r"MUJOCO_GL=osmesa: .*libosmesa6.*or use MUJOCO_GL=egl"):
        GL.configure_gl_backend()
    assert os.environ["MUJOCO_GL"] == "osmesa"


@pytest.mark.parametrize("value", ["foo", "egl; rm -rf /", "\x1b[31mred"])
def test_a_value_mujoco_does_not_know_is_one_line(monkeypatch, capsys, tmp_path, value):
    """MuJoCo's import raises RuntimeError on it: any command that imports MuJoCo says so."""
    monkeypatch.setenv("MUJOCO_GL", value)
    code = main(["render", str(tmp_path / "x.pt"), "--output", str(tmp_path / "v.webp")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "\n" not in err and "\x1b" not in err, err
    assert "is not a value MuJoCo knows" in err
    assert list(tmp_path.iterdir()) == []
