"""The bounds `sacscale evaluate` and `sacscale render(-best)` put on their protocol flags,
without MuJoCo or torch, so that planning holds a config's values to the same bounds
before any run trains (sacscale.pipeline.planning)."""

from __future__ import annotations

import math

from sacscale.task.walk_rules import CONTROL_DT, TaskConfig

MAX_FPS = 50  # the control rate: a frame per control step at most
MIN_FRAMES = 2  # one frame is a still of the start pose, not a video of the policy
SETTLE_S = 1.0  # evaluate's default: the first second of an episode is not scored
EPISODE_STEPS = TaskConfig.episode_length
EPISODE_S = EPISODE_STEPS * CONTROL_DT  # evaluate's longest --seconds and --settle-s: one episode


def fps_problem(fps: float, name: str = "--fps") -> str | None:
    """What is wrong with a video frame rate, as one line naming `name`; None when fine."""
    if not 1 <= fps <= MAX_FPS:
        return f"{name} {fps:g}: must be 1..{MAX_FPS} (the control rate)"
    return None


def frame_count(seconds: float, fps: float) -> int:
    """Frames of a video `seconds` long (frame k shows t = k / fps): one at least."""
    return max(1, int(round(seconds * fps)))


def video_length_problem(seconds: float, fps: float, name: str = "--seconds", fps_name: str = "--fps") -> str | None:
    """What is wrong with a video's length at its frame rate, as one line; None when fine."""
    frames = frame_count(seconds, fps)
    if frames < MIN_FRAMES:
        return (f"{name} {seconds:g} at {fps_name} {fps:g}: {frames} frame, "
                f"a still picture; a video has at least {MIN_FRAMES} (seconds x fps >= {MIN_FRAMES - 0.5:g})")
    return None


# The most pixels a video may hold, over all its frames. The report's video is 320x240 at
# 10 fps for 12 s: 9.2 M (448 kB of WebP); `sacscale render`'s defaults, 640x480 at 25 fps
# for 12 s, are 92 M. Past this a render ran for hours after the training (4096x4096 at
# 50 fps is 839 M a second of video), to a file far past the report's byte budget, and the
# WebP writer, which holds every frame at 3 bytes a pixel, needed its size in memory.
MAX_PIXEL_FRAMES = 100_000_000
REPORT_VIDEO = "320x240 at 10 fps for 12 s, 9,216,000"


def video_size_problem(width: int, height: int, seconds: float, fps: float,
                       names: tuple[str, str, str, str] = ("--width", "--height", "--seconds", "--fps")) -> str | None:
    """What is wrong with a video's pixels over all its frames, as one line naming the four
    settings (`names`: width, height, seconds, fps); None when fine."""
    frames = frame_count(seconds, fps) if math.isfinite(seconds * fps) else math.inf
    total = width * height * frames
    if total <= MAX_PIXEL_FRAMES:
        return None
    w, h, s, f = names
    shown = f"{total:,}" if math.isfinite(total) else "too many"
    return (f"{w} x {h} x {s} x {f}: {width}x{height} pixels, {seconds:g} s at {fps:g} fps: {shown} pixel-frames, "
            f"more than the {MAX_PIXEL_FRAMES:,} a video may hold (the report's: {REPORT_VIDEO}); make it smaller, "
            "shorter or slower")


def control_steps(seconds: float) -> int:
    return int(round(seconds / CONTROL_DT))


def settle_steps(settle_s: float) -> int:
    return int(math.ceil(settle_s / CONTROL_DT - 1e-9))


def seconds_problem(seconds: float, settle_s: float = SETTLE_S, episode_steps: int = EPISODE_STEPS,
                    name: str = "--seconds", settle_name: str = "--settle-s") -> str | None:
    """What is wrong with an evaluation length and its unscored start, as one line; None when fine."""
    longest = episode_steps * CONTROL_DT
    # far outside the episode a value is not turned into steps: 1e308 / CONTROL_DT overflowed
    steps = control_steps(seconds) if abs(seconds) <= 2 * longest else -1
    if not 1 <= steps <= episode_steps:
        return (f"{name} {seconds}: must give 1..{episode_steps} control steps "
                f"(one episode, {episode_steps * CONTROL_DT:g} s)")
    settle = settle_steps(settle_s) if abs(settle_s) <= 2 * longest else (-1 if settle_s < 0 else steps)
    if settle < 0:
        return f"{settle_name} {settle_s}: must be >= 0"
    if settle >= steps:
        return (f"{name} {seconds}: must be at least one control step ({CONTROL_DT:g} s) longer than "
                f"the {settle_s:g} s not scored ({settle_name} {settle_s})")
    return None
