"""The headless OpenGL backend of the policy videos: which one, and a renderer on it.

MuJoCo fixes its backend when `mujoco` is imported (MUJOCO_GL is read by
`mujoco.rendering.classic.gl_context` at import time, not at context creation: checked on
mujoco 4.0.0), and PyOpenGL fixes its platform (PYOPENGL_PLATFORM) when OpenGL is first
imported. So call `configure_gl_backend()` before anything imports mujoco in the process
(`sacscale render` does so first thing in run()): it honours MUJOCO_GL if set, else
chooses "egl" when an NVIDIA GPU is present and "osmesa" (software, Debian package
libosmesa6) otherwise, and sets PYOPENGL_PLATFORM to match. Before that it loads the
backend's libraries the way PyOpenGL will (`library_problem`): MuJoCo's import fails with
an AttributeError deep in PyOpenGL when they are missing, so a missing one is found here
and named with its package; a backend chosen here (not by MUJOCO_GL) falls back to the
other headless one when only that one loads. If mujoco was imported
before (a test session, a notebook), `open_renderer` still creates the context of the
chosen backend, by handing MuJoCo's Renderer that backend's GLContext class; that works
as long as PyOpenGL has not been loaded for another platform.

MuJoCo is therefore imported inside the functions here, never at module level.

`configure_gl_backend` also turns the GL drivers' shader disk caches off (SHADER_CACHE_OFF),
before any GL library is loaded: Mesa keeps llvmpipe's compiled native code under
$XDG_CACHE_HOME (or ~/.cache, or MESA_SHADER_CACHE_DIR) and loads it back on the next render,
so an inherited folder that another user can write would have renders run her code. A
policy video's few shaders compile in milliseconds, so the cache saves nothing worth that.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import glob
import importlib
import importlib.util
import os

GL_BACKENDS = ("egl", "osmesa")  # the headless ones; glfw/glx need a display
# the Debian package that provides each headless backend's library
GL_PACKAGES = {"osmesa": "libosmesa6", "egl": "libegl1"}
# what PyOpenGL loads for each (OpenGL.platform.osmesa / .egl): (library names tried in
# order, a symbol the library must export)
GL_LIBRARIES = {"osmesa": ((("OSMesa",), "OSMesaCreateContextExt"),),
                "egl": ((("EGL",), "eglGetDisplay"), (("OpenGL", "GL"), "glGetError"))}
# the values of MUJOCO_GL that MuJoCo accepts on Linux (anything else: its import raises)
# each GL driver's switch for its shader disk cache, set to "off" whatever was inherited: Mesa's
# (MESA_GLSL_CACHE_DISABLE is its name before Mesa 21, read by later ones only when the new
# one is unset) and NVIDIA's EGL driver's
SHADER_CACHE_OFF = {"MESA_SHADER_CACHE_DISABLE": "true", "MESA_GLSL_CACHE_DISABLE": "true",
                    "__GL_SHADER_DISK_CACHE": "0"}
MUJOCO_GL_VALUES = ("", "disable", "disabled", "off", "false", "0", "enable", "enabled", "on", "true", "1",
                    "glfw", "glx", "egl", "osmesa")


class RenderError(RuntimeError):
    """No GL context could be created, or the video could not be written."""


class GLBackendError(RenderError):
    """The OpenGL backend cannot make a context here: its library is missing, or no GPU."""


def gpu_present() -> bool:
    """An NVIDIA GPU is visible (its device node or driver entry)."""
    return bool(glob.glob("/dev/nvidia[0-9]*")) or bool(glob.glob("/proc/driver/nvidia/gpus/*"))


def choose_gl_backend() -> str:
    """MUJOCO_GL if set, else "egl" with an NVIDIA GPU, else "osmesa"."""
    chosen = os.environ.get("MUJOCO_GL", "").strip().lower()
    if chosen:
        return chosen
    return "egl" if gpu_present() else "osmesa"


def _load(names: tuple[str, ...], symbol: str) -> str | None:
    """None if one of the library `names` loads and exports `symbol`, else why not."""
    why = "not found"
    for name in names:
        for path in (ctypes.util.find_library(name), f"lib{name}.so"):
            if not path:
                continue
            try:
                lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
            except OSError as exc:
                why = (str(exc).splitlines() or ["cannot be loaded"])[0]
                continue
            if hasattr(lib, symbol):
                return None
            why = f"{path} lacks {symbol}"
    return why


def library_problem(backend: str) -> str | None:
    """None if PyOpenGL and the headless `backend`'s libraries load here, else what is missing
    and which package provides it (a backend with a display, glfw/glx, is not checked)."""
    if backend not in GL_BACKENDS:
        return None
    if importlib.util.find_spec("OpenGL") is None:
        return "the Python package PyOpenGL is not installed (pip install PyOpenGL)"
    for names, symbol in GL_LIBRARIES[backend]:
        why = _load(names, symbol)
        if why is not None:
            return (f"lib{names[0]} cannot be loaded ({why}); install {GL_PACKAGES[backend]} "
                    f"(Debian: apt-get install -y {GL_PACKAGES[backend]})")
    return None


def check_mujoco_gl() -> None:
    """GLBackendError, one line, if MUJOCO_GL is set to a value that would make `import mujoco`
    fail: one MuJoCo does not know, or a headless backend whose libraries do not load."""
    chosen = os.environ.get("MUJOCO_GL", "").strip().lower()
    if chosen not in MUJOCO_GL_VALUES:
        raise GLBackendError(f"MUJOCO_GL={chosen!r} is not a value MuJoCo knows; headless, use MUJOCO_GL=egl "
                             "(GPU) or osmesa (software), or unset it")
    problem = library_problem(chosen)
    if problem is not None:
        other = next((b for b in GL_BACKENDS if b != chosen), "osmesa")
        raise GLBackendError(f"MUJOCO_GL={chosen}: {problem}; or use MUJOCO_GL={other} "
                             f"({GL_PACKAGES[other]}), or unset MUJOCO_GL")


def mujoco_gl_problem() -> str | None:
    """What is wrong with MUJOCO_GL, if it is set and `import mujoco` would fail on it."""
    if not os.environ.get("MUJOCO_GL"):
        return None
    try:
        check_mujoco_gl()
    except GLBackendError as exc:
        return str(exc)
    return None


def configure_gl_backend() -> str:
    """Export MUJOCO_GL and PYOPENGL_PLATFORM (where unset) for the chosen backend; returns it.

    GLBackendError (one line naming the package) if MUJOCO_GL names a backend whose
    libraries do not load; a backend chosen here falls back to the other headless one when
    only that one loads. Takes full effect only before mujoco is imported in this process
    (see the module text). The shader disk caches are turned off first (SHADER_CACHE_OFF).
    """
    os.environ.update(SHADER_CACHE_OFF)  # before check_mujoco_gl loads any GL library
    check_mujoco_gl()
    backend = choose_gl_backend()
    if "MUJOCO_GL" not in os.environ or not os.environ["MUJOCO_GL"].strip():
        problem = library_problem(backend)
        if problem is not None:
            other = next(b for b in GL_BACKENDS if b != backend)
            if library_problem(other) is not None:
                raise GLBackendError(f"no headless OpenGL backend here: {backend}: {problem}; "
                                     f"{other}: {library_problem(other)}")
            backend = other
        os.environ["MUJOCO_GL"] = backend
    if backend in GL_BACKENDS:
        os.environ.setdefault("PYOPENGL_PLATFORM", backend)
    return backend


def _classic_gl_module():
    try:  # mujoco >= 4
        return importlib.import_module("mujoco.rendering.classic.gl_context")
    except ImportError:  # mujoco 3
        return importlib.import_module("mujoco.gl_context")


def open_renderer(model, width: int, height: int):
    """mujoco.Renderer on the configured headless backend; RenderError if none can be made."""
    from sacscale.mujoco_lib import mujoco  # only once the GL backend is chosen (sacscale.eval.gl_backend)

    backend = configure_gl_backend()
    glc = _classic_gl_module()
    at_import = getattr(glc, "_MUJOCO_GL", None)  # what mujoco chose when it was imported
    saved = getattr(glc, "GLContext", None)
    try:
        if backend in GL_BACKENDS and at_import != backend:
            # mujoco was imported before MUJOCO_GL was set: give its Renderer our backend
            glc.GLContext = importlib.import_module(f"mujoco.{backend}").GLContext
        return mujoco.Renderer(model, height, width)
    except Exception as exc:  # ImportError, RuntimeError, mujoco.FatalError, ctypes errors...
        raise GLBackendError(gl_failure_line(backend, exc)) from None
    finally:
        glc.GLContext = saved


def gl_failure_line(backend: str, exc: BaseException) -> str:
    """One line: the backend, what failed, and the package that provides it (the
    exception's own text can span lines: only its first is kept)."""
    what = (str(exc).strip().splitlines() or ["no message"])[0]
    package = GL_PACKAGES.get(backend)
    if package is None:
        fix = f"MUJOCO_GL={backend} needs a display; headless, use MUJOCO_GL=egl (GPU) or osmesa"
    else:
        other = next(b for b in GL_BACKENDS if b != backend)
        fix = (f"install {package} (Debian: apt-get install -y {package})"
               + (" and a GPU driver" if backend == "egl" else "")
               + f", or use MUJOCO_GL={other} ({GL_PACKAGES[other]})")
    return f"no OpenGL context with MUJOCO_GL={backend} ({type(exc).__name__}: {what}); {fix}"


def render_status() -> tuple[bool, str]:
    """(True, backend) if a policy video can be made here: the G1's Menagerie files (its
    visual meshes) are found and a tiny scene renders; else (False, why)."""
    try:
        configure_gl_backend()
    except GLBackendError as exc:
        return False, str(exc)
    from sacscale.task import g1_model  # imports mujoco: only once the backend is chosen

    try:
        g1_model.asset_dir()
    except (ImportError, FileNotFoundError) as exc:
        return False, str(exc)
    return gl_status()


def gl_status() -> tuple[bool, str]:
    """(True, backend) if a tiny scene renders, else (False, why)."""
    from sacscale.mujoco_lib import mujoco  # only once the GL backend is chosen (sacscale.eval.gl_backend)

    model = mujoco.MjModel.from_xml_string(
        '<mujoco><worldbody><light pos="0 0 3"/><geom type="sphere" size="0.3" rgba="1 0 0 1"/>'
        "</worldbody></mujoco>")
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    try:
        renderer = open_renderer(model, 32, 24)
    except RenderError as exc:
        return False, str(exc)
    try:
        renderer.update_scene(data)
        img = renderer.render()
    finally:
        renderer.close()
    if img.std() == 0:
        return False, f"MUJOCO_GL={choose_gl_backend()} renders blank images"
    return True, choose_gl_backend()
