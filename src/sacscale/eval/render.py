"""Video of a trained policy walking: MuJoCo offscreen rendering of G1WalkFlat.

The physics is the task's own: one `G1WalkFlat` env (one thread, no observation noise,
nominal PD gains, the checkpoint's tilt input) steps the robot under the deterministic
policy, `tanh(mean)`, while a sequence of velocity commands is given (each segment holds
(vx, vy, wz) for some seconds). For each video frame the env's state (qpos, qvel) is
copied into an MjData of a *render model*: the task model's kinematics and physics built
by the same code (`g1_model._build_spec(keep_visual=True)`) but keeping Menagerie's visual
meshes, plus a floor texture, a skybox and a light. The two models must agree in their
joints (names, order, addresses) and kinematic tree; that is checked before rendering.

OpenGL backend. MuJoCo fixes its backend when `mujoco` is imported (MUJOCO_GL is read by
`mujoco.rendering.classic.gl_context` at import time, not at context creation: checked on
mujoco 4.0.0), and PyOpenGL fixes its platform (PYOPENGL_PLATFORM) when OpenGL is first
imported. So call `configure_gl_backend()` before anything imports mujoco in the process
(`sacscale render` does so first thing in run()): it honours MUJOCO_GL if set, else
chooses "egl" when an NVIDIA GPU is present and "osmesa" (software, Debian package
libosmesa6) otherwise, and sets PYOPENGL_PLATFORM to match. If mujoco was imported
before (a test session, a notebook), `open_renderer` still creates the context of the
chosen backend, by handing MuJoCo's Renderer that backend's GLContext class; that works
as long as PyOpenGL has not been loaded for another platform.

This module imports MuJoCo, torch and the task inside its functions, so importing it does
not fix the GL backend.
"""

from __future__ import annotations

import glob
import importlib
import math
import os
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sacscale.atomic import temporary_path

DEFAULT_COMMANDS = "0.5,0,0:4;0,0,0.6:4;0,0,0:4"
GL_BACKENDS = ("egl", "osmesa")  # the headless ones; glfw/glx need a display
VIDEO_FORMATS = (".webp", ".mp4", ".gif")
# animated WebP (Pillow): quality tried in turn until the file fits its byte budget; 50 gave
# 386 kB for 12 s of the committed best-run frames at 320x240 and 10 fps
WEBP_QUALITIES = (50, 35, 20)
# the Debian package that provides each headless backend's library
GL_PACKAGES = {"osmesa": "libosmesa6", "egl": "libegl1"}
MAX_FPS = 50  # the control rate: a frame per control step at most

# Camera: a free camera whose look-at point follows the pelvis (smoothed), at a fixed
# world azimuth set from the robot's first heading, so turns are seen as turns.
CAMERA_DISTANCE = 3.0  # m
CAMERA_ELEVATION = -15.0  # degrees
CAMERA_AZIMUTH_FROM_HEADING = 135.0  # degrees: the camera stands in front, to the robot's right
CAMERA_LOOKAT_Z = 0.55  # m, about the hips: the whole robot is in view
CAMERA_SMOOTH_S = 0.25  # time constant of the look-at's pursuit of the pelvis
CAMERA_SNAP_M = 1.0  # a jump larger than this (a reset after a fall) is followed at once

GAIT_CYCLE_STEPS = 33  # 1 / 1.5 Hz / 0.02 s: the overlay's achieved velocity is a mean over one cycle
FELL_BANNER_S = 1.5  # the overlay says "fell" for this long after a reset


class RenderError(RuntimeError):
    """No GL context could be created, or the video could not be written."""


class GLBackendError(RenderError):
    """The OpenGL backend cannot make a context here: its library is missing, or no GPU."""


@dataclass(frozen=True)
class Segment:
    command: tuple[float, float, float]  # vx, vy (m/s, heading frame), wz (rad/s)
    seconds: float


# ---------------------------------------------------------------------------- commands


def parse_commands(text: str) -> list[Segment]:
    """"vx,vy,wz:SECONDS;..." -> segments; ValueError naming the segment and the problem."""
    segments = []
    parts = [p.strip() for p in str(text).split(";")]
    if parts and parts[-1] == "":
        parts = parts[:-1]  # a trailing ";" is harmless
    if not parts:
        raise ValueError(f"--commands {text!r}: empty, expected 'vx,vy,wz:SECONDS;...'")
    for i, part in enumerate(parts, start=1):
        where = f"--commands segment {i} {part!r}"
        if part.count(":") != 1:
            raise ValueError(f"{where}: expected 'vx,vy,wz:SECONDS' (one ':' before the duration)")
        values, duration = part.split(":")
        fields = [v.strip() for v in values.split(",")]
        if len(fields) != 3:
            raise ValueError(f"{where}: expected 3 comma-separated values vx,vy,wz, got {len(fields)}")
        try:
            cmd = tuple(float(v) for v in fields)
            seconds = float(duration)
        except ValueError:
            raise ValueError(f"{where}: not a number (expected 'vx,vy,wz:SECONDS')") from None
        if not all(math.isfinite(v) for v in (*cmd, seconds)):
            raise ValueError(f"{where}: values must be finite")
        if seconds <= 0:
            raise ValueError(f"{where}: duration must be > 0 s, got {seconds:g}")
        segments.append(Segment(cmd, seconds))
    return segments


def command_warnings(segments: list[Segment], cfg) -> list[str]:
    """Commands the task never trains on (outside its ranges, or inside its dead zone)."""
    out = []
    for i, seg in enumerate(segments, start=1):
        vx, vy, wz = seg.command
        for name, v, (lo, hi) in (("vx", vx, cfg.cmd_vx), ("vy", vy, cfg.cmd_vy), ("wz", wz, cfg.cmd_wz)):
            if not lo <= v <= hi:
                out.append(f"segment {i}: {name} {v:g} is outside the training range [{lo:g}, {hi:g}]")
        norm = math.hypot(vx, vy)
        if 0 < norm <= cfg.cmd_dead_zone:
            out.append(f"segment {i}: planar speed {norm:g} is inside the task's dead zone "
                       f"(<= {cfg.cmd_dead_zone:g}: it trains such commands as 'stand')")
    return out


def segment_starts(segments: list[Segment], control_dt: float) -> list[int]:
    """First control step of each segment."""
    starts, t = [], 0.0
    for seg in segments:
        starts.append(int(round(t / control_dt)))
        t += seg.seconds
    return starts


def frame_steps(seconds: float, fps: float, control_dt: float) -> list[int]:
    """Control step shown by each frame: frame k shows the state at t = k / fps."""
    n = max(1, int(round(seconds * fps)))
    return [int(round(k / fps / control_dt)) for k in range(n)]


# ---------------------------------------------------------------------------- GL backend


def gpu_present() -> bool:
    """An NVIDIA GPU is visible (its device node or driver entry)."""
    return bool(glob.glob("/dev/nvidia[0-9]*")) or bool(glob.glob("/proc/driver/nvidia/gpus/*"))


def choose_gl_backend() -> str:
    """MUJOCO_GL if set, else "egl" with an NVIDIA GPU, else "osmesa"."""
    chosen = os.environ.get("MUJOCO_GL", "").strip().lower()
    if chosen:
        return chosen
    return "egl" if gpu_present() else "osmesa"


def configure_gl_backend() -> str:
    """Export MUJOCO_GL and PYOPENGL_PLATFORM (where unset) for the chosen backend; returns it.

    Takes full effect only before mujoco is imported in this process (see the module text).
    """
    backend = choose_gl_backend()
    os.environ.setdefault("MUJOCO_GL", backend)
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
    import mujoco

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
    from sacscale.task import g1_model

    try:
        g1_model.asset_dir()
    except (ImportError, FileNotFoundError) as exc:
        return False, str(exc)
    return gl_status()


def gl_status() -> tuple[bool, str]:
    """(True, backend) if a tiny scene renders, else (False, why)."""
    import mujoco

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


# ---------------------------------------------------------------------------- render model


def build_render_model(task_model, width: int, height: int, software: bool = False):
    """The task model with Menagerie's visuals, a floor texture, skybox and lights.

    software: cheaper settings for a software rasteriser (OSMesa): no multisampling, a
    smaller shadow map.

    Same code as the task model (g1_model._build_spec), visuals kept; the excluded
    self-contact pairs are copied from task_model (the task's rest-contact search would
    also measure the visual meshes). Visual-only additions: the floor geom gets a checker
    material and a visible group (its physics is untouched), textures, a light.
    """
    import mujoco

    from sacscale.task import g1_model as g1

    spec = g1._build_spec(exclude_rest_contacts=False, keep_visual=True)
    spec.modelname = "g1_walk_flat_render"
    for b1, b2 in excluded_body_pairs(task_model):
        spec.add_exclude(bodyname1=b1, bodyname2=b2)

    spec.add_texture(name="skybox", type=mujoco.mjtTexture.mjTEXTURE_SKYBOX,
                     builtin=mujoco.mjtBuiltin.mjBUILTIN_GRADIENT, rgb1=[0.3, 0.5, 0.7], rgb2=[0.0, 0.0, 0.0],
                     width=512, height=3072)
    spec.add_texture(name="groundplane", type=mujoco.mjtTexture.mjTEXTURE_2D,
                     builtin=mujoco.mjtBuiltin.mjBUILTIN_CHECKER, mark=mujoco.mjtMark.mjMARK_EDGE,
                     rgb1=[0.2, 0.3, 0.4], rgb2=[0.1, 0.2, 0.3], markrgb=[0.8, 0.8, 0.8], width=300, height=300)
    ground = spec.add_material(name="groundplane", texuniform=True, texrepeat=[2, 2], reflectance=0.2)
    ground.textures[mujoco.mjtTextureRole.mjTEXROLE_RGB] = "groundplane"
    floor = spec.geom("floor")
    floor.material = "groundplane"
    floor.group = 0  # visible (the task's colliders are group 3, hidden)

    # Menagerie's directional light, made to follow the robot so its shadow stays in view,
    # and a soft fill light; the headlight as in Menagerie's scene.xml
    for light in spec.lights:
        light.mode = mujoco.mjtCamLight.mjCAMLIGHT_TRACKCOM
    fill = spec.worldbody.add_light(name="fill", pos=[-2.0, 2.0, 4.0], dir=[0.4, -0.4, -0.8],
                                    type=mujoco.mjtLightType.mjLIGHT_DIRECTIONAL, castshadow=False,
                                    mode=mujoco.mjtCamLight.mjCAMLIGHT_TRACKCOM)
    fill.diffuse = [0.3, 0.3, 0.3]
    vis = spec.visual
    vis.headlight.diffuse = [0.6, 0.6, 0.6]
    vis.headlight.ambient = [0.1, 0.1, 0.1]
    vis.headlight.specular = [0.9, 0.9, 0.9]
    vis.rgba.haze = [0.15, 0.25, 0.35, 1.0]
    vis.global_.offwidth = max(int(width), 1)
    vis.global_.offheight = max(int(height), 1)
    vis.map.zfar = 100.0  # the floor to the horizon
    if software:
        # llvmpipe on a few cores: 4x multisampling and a 4096 shadow map cost about 2.5x
        # the frame time (Menagerie's G1 meshes have 390k triangles)
        vis.quality.offsamples = 0
        vis.quality.shadowsize = 1024
    return spec.compile()


def excluded_body_pairs(model) -> list[tuple[str, str]]:
    out = []
    for i in range(model.nexclude):
        sig = int(model.exclude_signature[i])
        out.append((model.body(sig >> 16).name, model.body(sig & 0xFFFF).name))
    return out


# structure and kinematics: a difference here means the video would not show the task's robot
_KINEMATIC_FIELDS = ("body_parentid", "body_pos", "body_quat", "body_ipos", "body_iquat", "jnt_type",
                     "jnt_bodyid", "jnt_qposadr", "jnt_dofadr", "jnt_pos", "jnt_axis", "qpos0")
# dynamics and contacts: compared too, reported (the motion shown is the task env's anyway)
_PHYSICS_FIELDS = ("body_mass", "body_inertia", "jnt_range", "dof_armature", "dof_damping", "dof_frictionloss",
                   "actuator_trnid", "actuator_gainprm", "actuator_biasprm", "actuator_forcerange",
                   "sensor_type", "sensor_objid")
_GEOM_FIELDS = ("geom_bodyid", "geom_type", "geom_size", "geom_pos", "geom_quat", "geom_friction",
                "geom_priority", "geom_condim", "geom_contype", "geom_conaffinity", "geom_margin", "geom_solref",
                "geom_solimp")
_OPT_FIELDS = ("timestep", "integrator", "solver", "cone", "iterations", "ls_iterations", "tolerance")


def compare_models(render_model, task_model) -> list[str]:
    """Raise ValueError if the render model's joints or kinematic tree differ from the task
    model's; return the names of the dynamics/contact fields that differ (empty: none)."""
    import mujoco

    r, t = render_model, task_model
    if (r.nq, r.nv, r.nu, r.njnt, r.nbody) != (t.nq, t.nv, t.nu, t.njnt, t.nbody):
        raise ValueError(f"render model nq/nv/nu/njnt/nbody {(r.nq, r.nv, r.nu, r.njnt, r.nbody)} != "
                         f"task model's {(t.nq, t.nv, t.nu, t.njnt, t.nbody)}")
    for kind, n in ((mujoco.mjtObj.mjOBJ_JOINT, t.njnt), (mujoco.mjtObj.mjOBJ_BODY, t.nbody),
                    (mujoco.mjtObj.mjOBJ_ACTUATOR, t.nu)):
        rn = [mujoco.mj_id2name(r, kind, i) for i in range(n)]
        tn = [mujoco.mj_id2name(t, kind, i) for i in range(n)]
        if rn != tn:
            raise ValueError(f"render model {kind.name.removeprefix('mjOBJ_').lower()} names/order differ "
                             f"from the task model's")
    bad = [f for f in _KINEMATIC_FIELDS if not np.array_equal(getattr(r, f), getattr(t, f))]
    if bad:
        raise ValueError(f"render model kinematics differ from the task model's: {', '.join(bad)}")
    diff = [f for f in _PHYSICS_FIELDS if not np.array_equal(getattr(r, f), getattr(t, f))]
    rc = (r.geom_contype != 0) | (r.geom_conaffinity != 0)
    tc = (t.geom_contype != 0) | (t.geom_conaffinity != 0)
    if rc.sum() != tc.sum():
        diff.append("colliding geoms (count)")
    else:
        diff += [f"{f} (colliding geoms)" for f in _GEOM_FIELDS
                 if not np.array_equal(getattr(r, f)[rc], getattr(t, f)[tc])]
    if excluded_body_pairs(r) != excluded_body_pairs(t):
        diff.append("excluded body pairs")
    diff += [f"opt.{f}" for f in _OPT_FIELDS if getattr(r.opt, f) != getattr(t.opt, f)]
    return diff


# ---------------------------------------------------------------------------- frames


class FollowCamera:
    """Free camera: fixed azimuth and elevation, look-at point pursuing the pelvis."""

    def __init__(self, heading_rad: float, fps: float):
        import mujoco

        self.cam = mujoco.MjvCamera()
        self.cam.type = mujoco.mjtCamera.mjCAMERA_FREE
        self.cam.distance = CAMERA_DISTANCE
        self.cam.elevation = CAMERA_ELEVATION
        self.cam.azimuth = math.degrees(heading_rad) + CAMERA_AZIMUTH_FROM_HEADING
        self._alpha = 1.0 - math.exp(-1.0 / (fps * CAMERA_SMOOTH_S))
        self._lookat: np.ndarray | None = None

    def follow(self, pelvis_xy: np.ndarray):
        target = np.array([pelvis_xy[0], pelvis_xy[1], CAMERA_LOOKAT_Z])
        if self._lookat is None or np.linalg.norm(target - self._lookat) > CAMERA_SNAP_M:
            self._lookat = target
        else:
            self._lookat += (target - self._lookat) * self._alpha
        self.cam.lookat[:] = self._lookat
        return self.cam


def _font(size: int):
    from PIL import ImageFont

    for name in ("DejaVuSansMono.ttf", "DejaVuSansMono-Bold.ttf"):
        try:
            return ImageFont.truetype(name, size)
        except OSError:
            continue
    return ImageFont.load_default(size=size)


def overlay_font_size(width: int, height: int) -> int:
    return max(8, int(round(min(width / 42.0, height / 26.0))))


def draw_overlay(frame: np.ndarray, lines: list[str], font) -> np.ndarray:
    """Text lines top-left on a dark band, drawn into a copy of the RGB frame."""
    from PIL import Image, ImageDraw

    img = Image.fromarray(frame)
    draw = ImageDraw.Draw(img, "RGBA")
    size = font.size if hasattr(font, "size") else 10
    pad, line_h = max(2, size // 3), int(size * 1.25)
    box_w = max(int(draw.textlength(s, font=font)) for s in lines) + 2 * pad
    draw.rectangle([0, 0, min(box_w, img.width - 1), pad * 2 + line_h * len(lines)], fill=(0, 0, 0, 150))
    for i, s in enumerate(lines):
        draw.text((pad, pad + i * line_h), s, font=font, fill=(255, 255, 255, 255))
    return np.asarray(img)


def _f(v: float) -> str:
    return f"{round(float(v), 2) + 0.0:.2f}"  # no "-0.00"


def overlay_lines(cmd, t: float, achieved, fell: bool) -> list[str]:
    """The command and time; the achieved velocity (pelvis vx, vy in the heading frame,
    torso IMU yaw rate: the task's tracked quantities), a mean over the last gait cycle."""
    lines = [f"cmd vx {_f(cmd[0])} vy {_f(cmd[1])} wz {_f(cmd[2])} | t {t:.1f} s"]
    if achieved is not None:
        lines.append(f"got vx {_f(achieved[0])} vy {_f(achieved[1])} wz {_f(achieved[2])}"
                     + (" | fell: reset" if fell else ""))
    elif fell:
        lines.append("fell: reset")
    return lines


# ---------------------------------------------------------------------------- writers


class _Mp4Writer:
    """H.264 through imageio-ffmpeg's bundled ffmpeg, frames streamed."""

    def __init__(self, path: Path, fps: float):
        import imageio.v2 as iio

        self._w = iio.get_writer(str(path), format="FFMPEG", mode="I", fps=fps, codec="libx264",
                                 pixelformat="yuv420p", quality=7, macro_block_size=2, ffmpeg_log_level="error")

    def append(self, frame: np.ndarray) -> None:
        self._w.append_data(frame)

    def close(self) -> None:
        self._w.close()


class _GifWriter:
    """GIF through imageio's pillow writer: one palette (from the first frame), no dithering,
    so frames are 1 byte a pixel in memory and the file compresses well."""

    def __init__(self, path: Path, fps: float, colors: int = 128):
        self.path, self.fps, self.colors = path, fps, colors
        self._palette = None  # a PIL "P" image holding the shared palette
        self._frames: list[np.ndarray] = []

    def append(self, frame: np.ndarray) -> None:
        from PIL import Image

        img = Image.fromarray(frame)
        if self._palette is None:
            self._palette = img.quantize(colors=self.colors, method=Image.Quantize.MEDIANCUT)
        q = img.quantize(palette=self._palette, dither=Image.Dither.NONE)
        self._frames.append(np.asarray(q))

    def close(self) -> None:
        import imageio.v3 as iio

        if not self._frames:
            return
        palette = bytes(self._palette.getpalette()[: 3 * 256])
        # GIF delays are whole centiseconds: alternate them (80/90 ms at 12 fps) so that
        # frame k still starts at k / fps
        ticks = [int(round(100.0 * k / self.fps)) for k in range(len(self._frames) + 1)]
        durations = [10 * (b - a) for a, b in zip(ticks, ticks[1:])]
        with iio.imopen(self.path, "w", plugin="pillow", extension=".gif") as f:
            f.write(np.stack(self._frames), mode="P", is_batch=True, palette=palette,
                    duration=durations if len(durations) > 1 else durations[0], loop=0)
        self._frames = []


class _WebpWriter:
    """Animated WebP through Pillow: lossy frames, each quality of WEBP_QUALITIES in turn
    until the file fits `max_bytes` (the last is kept either way; render_policy's summary
    gives the size)."""

    def __init__(self, path: Path, fps: float, max_bytes: int | None = None):
        self.path, self.fps, self.max_bytes = path, fps, max_bytes
        self._frames: list = []

    def append(self, frame: np.ndarray) -> None:
        from PIL import Image

        self._frames.append(Image.fromarray(frame))

    def close(self) -> None:
        if not self._frames:
            return
        # whole milliseconds: alternate them so that frame k still starts at k / fps
        ticks = [int(round(1000.0 * k / self.fps)) for k in range(len(self._frames) + 1)]
        durations = [b - a for a, b in zip(ticks, ticks[1:])]
        for quality in WEBP_QUALITIES:
            self._frames[0].save(self.path, format="WEBP", save_all=True, append_images=self._frames[1:],
                                 duration=durations, loop=0, quality=quality, method=4)
            if self.max_bytes is None or self.path.stat().st_size <= self.max_bytes:
                break
        self._frames = []


def _writer_class(suffix: str):
    return {".mp4": _Mp4Writer, ".webp": _WebpWriter}.get(suffix.lower(), _GifWriter)


class _Guarded:
    """A writer whose failures (no ffmpeg, a full disk, ...) surface as RenderError."""

    def __init__(self, path: Path, fps: float, output: Path, max_bytes: int | None = None):
        self._output = output
        cls = _writer_class(path.suffix)
        extra = (max_bytes,) if cls is _WebpWriter else ()
        self._w = self._call(cls, path, fps, *extra)

    def _call(self, fn, *args):
        try:
            return fn(*args)
        except (OSError, RuntimeError, ValueError) as exc:
            raise RenderError(f"{self._output}: writing the video failed ({type(exc).__name__}: {exc})") from exc

    def append(self, frame: np.ndarray) -> None:
        self._call(self._w.append, frame)

    def close(self) -> None:
        self._call(self._w.close)


# ---------------------------------------------------------------------------- rollout


def check_video_args(output: str | Path, width: int, height: int, fps: float) -> Path:
    output = Path(output)
    if output.suffix.lower() not in VIDEO_FORMATS:
        raise ValueError(f"--output {output}: must end in {' or '.join(VIDEO_FORMATS)}")
    if not (16 <= width <= 4096 and 16 <= height <= 4096):
        raise ValueError(f"--width/--height {width}x{height}: each must be 16..4096")
    if output.suffix.lower() == ".mp4" and (width % 2 or height % 2):
        raise ValueError(f"--width/--height {width}x{height}: H.264 (.mp4) needs even sizes")
    if not 1 <= fps <= MAX_FPS:
        raise ValueError(f"--fps {fps:g}: must be 1..{MAX_FPS} (the control rate)")
    return output


def render_policy(checkpoint: str | Path, output: str | Path, *, model_path: str | Path | None = None,
                  segments: list[Segment] | None = None, seconds: float | None = None, width: int = 640,
                  height: int = 480, fps: float = 25.0, seed: int = 0, max_bytes: int | None = None) -> dict:
    """Render the checkpoint's deterministic policy following `segments` to output
    (.webp/.mp4/.gif). max_bytes: a WebP is re-encoded at lower quality until it fits.

    seconds: video length; default the segments' total. Past the last segment its command
    holds. Returns a summary (frames, steps, falls, sizes, timings, backend).
    """
    t0 = time.perf_counter()
    segments = segments if segments is not None else parse_commands(DEFAULT_COMMANDS)
    seconds = float(seconds) if seconds is not None else sum(s.seconds for s in segments)
    if not seconds > 0 or not math.isfinite(seconds):
        raise ValueError(f"--seconds {seconds:g}: must be > 0")
    output = check_video_args(output, width, height, fps)

    configure_gl_backend()  # before this function imports mujoco (no-op if done already)
    import mujoco
    import torch

    from sacscale.eval.evaluate import build_actor, heading_frame_velocity, load_checkpoint, resolve_checkpoint
    from sacscale.task import g1_model as g1
    from sacscale.task.g1_walk_flat import G1WalkFlat, TaskConfig

    path = resolve_checkpoint(checkpoint)
    ckpt = load_checkpoint(path)
    actor = build_actor(ckpt, path)
    cfg = TaskConfig(noise_joint_pos=0.0, noise_joint_vel=0.0, kp_range=(1.0, 1.0), kd_range=(1.0, 1.0),
                     tilt_obs=ckpt["task"]["tilt_obs"])
    dt = g1.CONTROL_DT
    frames_at = frame_steps(seconds, fps, dt)
    starts = segment_starts(segments, dt)
    n_steps = frames_at[-1]

    t_model = time.perf_counter()
    task_model = g1.load_model(model_path)
    # OSMesa, or EGL without a GPU (Mesa's llvmpipe): software rasterisation
    software = choose_gl_backend() == "osmesa" or not gpu_present()
    render_model = build_render_model(task_model, width, height, software=software)
    model_diff = compare_models(render_model, task_model)
    model_s = time.perf_counter() - t_model
    data = mujoco.MjData(render_model)
    renderer = open_renderer(render_model, width, height)
    font = _font(overlay_font_size(width, height))

    output.parent.mkdir(parents=True, exist_ok=True)
    tmp = temporary_path(output)
    torch_threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as `sacscale evaluate`: the actor's numbers do not depend on the core count
    sim_s = render_s = encode_s = 0.0
    falls, n_frames, fell_at = 0, 0, None
    window: deque = deque(maxlen=GAIT_CYCLE_STEPS)
    seg_index = -1
    env = writer = None
    try:
        env = G1WalkFlat(task_model, 1, 1, seed, config=cfg)  # one env, one physics thread
        torso_gyro_z = env._sadr["torso_gyro"].start + 2
        writer = _Guarded(tmp, fps, output, max_bytes)
        env.command_override = np.array([segments[0].command], dtype=np.float64)
        obs, _ = env.reset()  # the first segment's command, as a reset assigns it
        w, x, y, z = env._qpos[0, 3:7]
        camera = FollowCamera(math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z)), fps)
        frame_iter = iter(frames_at)
        next_frame = next(frame_iter, None)
        for step in range(n_steps + 1):
            seg = max(i for i, s in enumerate(starts) if s <= step)
            if seg != seg_index:  # a new segment: its command now, and after any reset
                seg_index = seg
                cmd = np.array([segments[seg].command], dtype=np.float64)
                env.commands[:] = cmd
                env.command_override = cmd.copy()
                obs, _ = env._observe(None)  # the observation the task gives with this command
            while next_frame == step:
                t = time.perf_counter()
                data.qpos[:] = env._qpos[0]
                data.qvel[:] = env._qvel[0]
                mujoco.mj_forward(render_model, data)
                renderer.update_scene(data, camera=camera.follow(data.qpos[:2]))
                rgb = renderer.render()
                achieved = np.mean(window, axis=0) if window else None
                fell = fell_at is not None and (step - fell_at) * dt < FELL_BANNER_S
                frame = draw_overlay(rgb, overlay_lines(env.commands[0], step * dt, achieved, fell), font)
                t1 = time.perf_counter()
                writer.append(frame)
                render_s += t1 - t
                encode_s += time.perf_counter() - t1
                n_frames += 1
                next_frame = next(frame_iter, None)
            if step == n_steps:
                break
            t = time.perf_counter()
            env.timeout_counter[:] = 0  # no time-outs in a video; a fall still resets
            with torch.no_grad():
                actions = actor.act(torch.from_numpy(obs), deterministic=True).numpy()
            env.start_step(actions)
            env.wait_physics()
            v = heading_frame_velocity(env._qpos, env._qvel)[0]
            v[2] = env._sens[0, torso_gyro_z]  # the yaw rate the task tracks: the torso IMU's
            out = env.finish_step()
            obs = out.actor_obs
            if out.terminated[0]:
                falls += 1
                fell_at = step + 1
                window.clear()
            else:
                window.append(v)
            sim_s += time.perf_counter() - t
        t = time.perf_counter()
        closing, writer = writer, None
        closing.close()
        encode_s += time.perf_counter() - t
        os.replace(tmp, output)
    finally:
        if writer is not None:  # an error on the way: stop the encoder, drop the partial file
            try:
                writer.close()
            except RenderError:
                pass
        if env is not None:
            env.close()
        renderer.close()
        torch.set_num_threads(torch_threads)
        if tmp.exists():
            tmp.unlink()

    return {
        "checkpoint": str(path),
        "iteration": ckpt.get("iteration"),
        "env_steps": ckpt.get("env_steps"),
        "output": str(output),
        "bytes": output.stat().st_size,
        "format": output.suffix.lower().lstrip("."),
        "width": width,
        "height": height,
        "fps": fps,
        "frames": n_frames,
        "seconds": seconds,
        "control_steps": n_steps,
        "segments": [{"command": list(s.command), "seconds": s.seconds, "start_step": st}
                     for s, st in zip(segments, starts)],
        "falls": falls,
        "seed": seed,
        "tilt_obs": cfg.tilt_obs,
        "gl_backend": choose_gl_backend(),
        "model": None if model_path is None else str(model_path),
        "model_sha256": g1.sha256_file(model_path) if model_path else g1.model_bytes_sha256(task_model),
        "checkpoint_model_sha256": ckpt.get("model_sha256"),
        "render_model_differs_in": model_diff,
        "timing": {"model_s": model_s, "sim_s": sim_s, "render_s": render_s, "encode_s": encode_s,
                   "wall_s": time.perf_counter() - t0},
    }
