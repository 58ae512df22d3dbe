"""The frames of a policy video (a camera following the robot, a text overlay) and the
writers of its formats (WebP, MP4, GIF).

MuJoCo and imageio are imported inside the functions: MuJoCo only after the GL backend is
chosen (sacscale.eval.gl_backend), imageio only when its format is written.
"""

from __future__ import annotations

import contextlib
import errno
import math
import os
import subprocess
from fractions import Fraction
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from sacscale.eval.gl_backend import RenderError
from sacscale.stopping import stops_held

VIDEO_FORMATS = (".webp", ".mp4", ".gif")
# animated WebP (Pillow): quality tried in turn until the file fits its byte budget; 50 gave
# 386 kB for 12 s of the committed best-run frames at 320x240 and 10 fps
WEBP_QUALITIES = (50, 35, 20)

# Camera: a free camera whose look-at point follows the pelvis (smoothed), at a fixed
# world azimuth set from the robot's first heading, so turns are seen as turns.
CAMERA_DISTANCE = 3.0  # m
CAMERA_ELEVATION = -15.0  # degrees
CAMERA_AZIMUTH_FROM_HEADING = 135.0  # degrees: the camera stands in front, to the robot's right
CAMERA_LOOKAT_Z = 0.55  # m, about the hips: the whole robot is in view
CAMERA_SMOOTH_S = 0.25  # time constant of the look-at's pursuit of the pelvis
CAMERA_SNAP_M = 1.0  # a jump larger than this (a reset after a fall) is followed at once


class FollowCamera:
    """Free camera: fixed azimuth and elevation, look-at point pursuing the pelvis."""

    def __init__(self, heading_rad: float, fps: float):
        from sacscale.mujoco_lib import mujoco  # only once the GL backend is chosen (sacscale.eval.gl_backend)

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


def overlay_font(size: int):
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


class _Mp4Writer:
    """H.264 by the ffmpeg that imageio-ffmpeg bundles, frames streamed to its input.

    ffmpeg runs in a process group of its own (our stop signals do not reach it), made by
    Popen between fork and exec. imageio's own writer made it with a preexec_fn, Python run
    in the forked child, which the subprocess docs call unsafe in a process with threads, as
    render's are (physics, MuJoCo's batch, llvmpipe, torch): a known hang of that writer.
    ffmpeg creates the file only at its first frame or the end of its input, so the file may
    be removed only once ffmpeg is gone: a stop is held while ffmpeg starts (a stop inside
    Popen after its fork left an ffmpeg nobody ended), and whatever ends close or drop,
    ffmpeg is ended and reaped by them."""

    def __init__(self, path: Path, fps: float):
        self._path, self._fps = str(path), fps
        self._ffmpeg: subprocess.Popen | None = None

    def append(self, frame: np.ndarray) -> None:
        frame = np.ascontiguousarray(frame, dtype=np.uint8)
        if self._ffmpeg is None:
            with stops_held():
                self._ffmpeg = self._start(frame.shape[1], frame.shape[0])
        try:  # not held: an ffmpeg that takes no more frames blocks this write, and a stop must end it
            self._ffmpeg.stdin.write(frame.data)
        except BrokenPipeError:
            raise RuntimeError(self._ended_early()) from None

    def _start(self, width: int, height: int) -> subprocess.Popen:
        from imageio_ffmpeg import get_ffmpeg_exe  # only when an .mp4 is written

        fps = Fraction(self._fps).limit_denominator()  # exact, as 24000/1001
        # crf 15: imageio's quality 7 of 10, the setting the committed videos were made with
        cmd = [get_ffmpeg_exe(), "-y", "-f", "rawvideo", "-vcodec", "rawvideo", "-s", f"{width}x{height}",
               "-pix_fmt", "rgb24", "-r", str(fps), "-i", "-", "-an", "-vcodec", "libx264", "-pix_fmt", "yuv420p",
               "-crf", "15", "-v", "error", self._path]
        return subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, process_group=0)

    def _ended_early(self) -> str:
        with contextlib.suppress(subprocess.TimeoutExpired):  # its input closes a moment before it ends
            self._ffmpeg.wait(timeout=_EXIT_GRACE_S)
        status = self._end()
        _refuse_output_status(status, self._path)
        return f"ffmpeg stopped taking frames (exit status {status}; its own message, if any, is above)"

    def close(self) -> None:
        if self._ffmpeg is None:
            return
        try:
            self._ffmpeg.stdin.close()  # the end of its input: ffmpeg encodes what it holds and ends
            status = self._ffmpeg.wait()  # a stop meanwhile: ended without waiting, below
        except BrokenPipeError:
            raise RuntimeError(self._ended_early()) from None
        finally:
            self._end()
        if status != 0:
            _refuse_output_status(status, self._path)
            _refuse_if_full(self._path)
            raise RuntimeError(f"ffmpeg ended with exit status {status} (its own message, if any, is above)")
        if os.path.getsize(self._path) == 0:
            raise RuntimeError("ffmpeg ended with exit status 0 but wrote no video")

    def drop(self) -> None:
        self._end()

    def _end(self) -> int | None:
        """Kill ffmpeg if it still runs and reap it; its exit status (None: never started)."""
        ffmpeg, self._ffmpeg = self._ffmpeg, None
        if ffmpeg is None:
            return None
        if ffmpeg.poll() is None:
            ffmpeg.kill()
        status = ffmpeg.wait()
        with contextlib.suppress(OSError):  # frames still buffered for an ffmpeg now gone
            ffmpeg.stdin.close()
        return status


# an ffmpeg that its input closed on ends within this, and one that has not is killed
_EXIT_GRACE_S = 5.0

# a disk that refuses the output: full, over quota, read-only, not ours
_OUTPUT_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM)
# ffmpeg exits with its error code, AVERROR(errno) = -errno, as a byte: 256 - errno (228 for
# ENOSPC). EPERM's 255 is left out: ffmpeg also exits 255 after a signal
_FFMPEG_OUTPUT_STATUS = {256 - code: code for code in _OUTPUT_ERRNOS if code != errno.EPERM}


def _refuse_output_status(status: int | None, path: str) -> None:
    """Raise the OSError an ffmpeg's exit status stands for, where it is an output errno."""
    if (code := _FFMPEG_OUTPUT_STATUS.get(status)) is not None:
        raise OSError(code, os.strerror(code), path)


# where ffmpeg's status is not an output errno's, it tells a full disk only in its own words:
# a failed ffmpeg whose disk has less than this left is taken to have failed for want of space
_FULL_BELOW_BYTES = 1 << 20


def _refuse_if_full(path: str) -> None:
    """Raise ENOSPC for `path` where its disk is all but full (or out of inodes)."""
    try:
        disk = os.statvfs(os.path.dirname(path) or ".")
    except OSError:
        return
    if disk.f_bavail * disk.f_frsize < _FULL_BELOW_BYTES or (disk.f_files and not disk.f_favail):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), path)


class _GifWriter:
    """GIF through imageio's pillow writer: one palette (from the first frame), no dithering,
    so frames are 1 byte a pixel in memory and the file compresses well."""

    def __init__(self, path: Path, fps: float, colors: int = 128):
        self.path, self.fps, self.colors = path, fps, colors
        self._palette = None  # a PIL "P" image holding the shared palette
        self._frames: list[np.ndarray] = []

    def append(self, frame: np.ndarray) -> None:
        img = Image.fromarray(frame)
        if self._palette is None:
            self._palette = img.quantize(colors=self.colors, method=Image.Quantize.MEDIANCUT)
        q = img.quantize(palette=self._palette, dither=Image.Dither.NONE)
        self._frames.append(np.asarray(q))

    def close(self) -> None:
        import imageio.v3 as iio  # only when a .gif is written

        if not self._frames:
            return
        palette = bytes(self._palette.getpalette()[: 3 * 256])
        # GIF delays are whole centiseconds: alternate them (80/90 ms at 12 fps) so that
        # frame k still starts at k / fps
        ticks = [int(round(100.0 * k / self.fps)) for k in range(len(self._frames) + 1)]
        durations = [10 * (b - a) for a, b in zip(ticks, ticks[1:])]
        # encoded in memory, then written once: a full disk under imageio's own file left a
        # writer that failed again at exit and printed its traceback after the one-line error
        data = iio.imwrite("<bytes>", np.stack(self._frames), plugin="pillow", extension=".gif", mode="P",
                           is_batch=True, palette=palette, duration=durations if len(durations) > 1 else durations[0],
                           loop=0)
        self._frames = []
        with open(self.path, "wb") as out:
            out.write(data)

    def drop(self) -> None:
        self._frames = []  # nothing is encoded: the file was never written


class _WebpWriter:
    """Animated WebP through Pillow: lossy frames, each quality of WEBP_QUALITIES in turn
    until the file fits `max_bytes` (the last is kept either way; render_policy's summary
    gives the size)."""

    def __init__(self, path: Path, fps: float, max_bytes: int | None = None):
        self.path, self.fps, self.max_bytes = path, fps, max_bytes
        self._frames: list = []

    def append(self, frame: np.ndarray) -> None:
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

    def drop(self) -> None:
        self._frames = []  # nothing is encoded: the file was never written


def _writer_class(suffix: str):
    return {".mp4": _Mp4Writer, ".webp": _WebpWriter}.get(suffix.lower(), _GifWriter)


class GuardedWriter:
    """A writer whose failures (no ffmpeg, a full disk, ...) surface as RenderError."""

    def __init__(self, path: Path, fps: float, output: Path, max_bytes: int | None = None):
        self._output = output
        cls = _writer_class(path.suffix)
        extra = (max_bytes,) if cls is _WebpWriter else ()
        self._w = self._call(cls, path, fps, *extra)

    def _call(self, fn, *args):
        try:
            return fn(*args)
        except OSError as exc:
            if exc.errno in _OUTPUT_ERRNOS:  # named as the video's, one line, exit 2 (sacscale.cli)
                raise OSError(exc.errno, os.strerror(exc.errno), str(self._output)) from None
            raise RenderError(f"{self._output}: writing the video failed ({type(exc).__name__}: {exc})") from exc
        except (RuntimeError, ValueError) as exc:
            raise RenderError(f"{self._output}: writing the video failed ({type(exc).__name__}: {exc})") from exc

    def append(self, frame: np.ndarray) -> None:
        self._call(self._w.append, frame)

    def close(self) -> None:
        self._call(self._w.close)

    def drop(self) -> None:
        """End a video that will not be kept (an error or a stop on the way) without encoding
        what is held: a WebP of thousands of frames took minutes to encode for nothing."""
        self._w.drop()
