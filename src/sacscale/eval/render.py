"""Video of a trained policy walking: MuJoCo offscreen rendering of G1WalkFlat.

The physics is the task's own: one `G1WalkFlat` env (one thread, no observation noise,
nominal PD gains, the checkpoint's tilt input) steps the robot under the deterministic
policy, `tanh(mean)`, while a sequence of velocity commands is given (each segment holds
(vx, vy, wz) for some seconds). For each video frame the env's state (qpos, qvel) is
copied into an MjData of a *render model*: the task model's kinematics and physics built
by the same code (`g1_model.build_spec(keep_visual=True)`) but keeping Menagerie's visual
meshes, plus a floor texture, a skybox and a light. The two models must agree in their
joints (names, order, addresses) and kinematic tree; that is checked before rendering.

The OpenGL backend is chosen and opened by sacscale.eval.gl_backend, the render model
built by sacscale.eval.render_model, the frames drawn and written by sacscale.eval.video.

This module imports MuJoCo, torch and the simulated task inside its functions, so importing
it does not fix the GL backend.
"""

from __future__ import annotations

import math
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sacscale import stopping
from sacscale.atomic import temporary_path
from sacscale.eval.gl_backend import (choose_gl_backend, configure_gl_backend, gpu_present,
                                      open_renderer)
from sacscale.eval.limits import fps_problem, frame_count
from sacscale.no_replace import rename_into_place
from sacscale.eval.render_model import build_render_model, compare_models
from sacscale.task.walk_rules import TaskConfig
from sacscale.eval.video import (VIDEO_FORMATS, FollowCamera, GuardedWriter, draw_overlay, overlay_font,
                                 overlay_font_size, overlay_lines)

DEFAULT_COMMANDS = "0.5,0,0:4;0,0,0.6:4;0,0,0:4"

GAIT_CYCLE_STEPS = 33  # 1 / 1.5 Hz / 0.02 s: the overlay's achieved velocity is a mean over one cycle
FELL_BANNER_S = 1.5  # the overlay says "fell" for this long after a reset


@dataclass(frozen=True)
class Segment:
    command: tuple[float, float, float]  # vx, vy (m/s, heading frame), wz (rad/s)
    seconds: float


# ---------------------------------------------------------------------------- commands


# a commanded velocity far past the training range is shown (with a warning); one past this
# is no walking speed, and past float32's range it reached the policy as inf
MAX_COMMAND = 100.0


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
        if any(abs(v) > MAX_COMMAND for v in cmd):  # past float32 the task's inputs became inf, the actions NaN
            raise ValueError(f"{where}: a velocity beyond {MAX_COMMAND:g} (m/s, rad/s) is no command a walker "
                             "can follow")
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
    return [int(round(k / fps / control_dt)) for k in range(frame_count(seconds, fps))]


# ---------------------------------------------------------------------------- rollout


def check_video_args(output: str | Path, width: int, height: int, fps: float) -> Path:
    output = Path(output)
    if output.suffix.lower() not in VIDEO_FORMATS:
        raise ValueError(f"--output {output}: must end in {' or '.join(VIDEO_FORMATS)}")
    if not (16 <= width <= 4096 and 16 <= height <= 4096):
        raise ValueError(f"--width/--height {width}x{height}: each must be 16..4096")
    if output.suffix.lower() == ".mp4" and (width % 2 or height % 2):
        raise ValueError(f"--width/--height {width}x{height}: H.264 (.mp4) needs even sizes")
    problem = fps_problem(fps)
    if problem:
        raise ValueError(problem)
    return output


def _drop_quietly(writer: GuardedWriter) -> None:
    """End a writer whose video is dropped: its own failure (an encoder already gone) is no
    news beside the first."""
    try:
        writer.drop()
    except Exception:  # noqa: BLE001 - the error or stop that got us here is the one reported
        pass


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
    # these import MuJoCo (directly or through the task): only once the GL backend is chosen
    import torch

    from sacscale.eval.evaluate import (build_actor, heading_frame_velocity, load_checkpoint, load_input_model,
                                        resolve_checkpoint)
    from sacscale.mujoco_lib import mujoco
    from sacscale.task import g1_model as g1
    from sacscale.task.g1_walk_flat import G1WalkFlat

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
    task_model, model_sha256 = load_input_model(model_path)
    # OSMesa, or EGL without a GPU (Mesa's llvmpipe): software rasterisation
    software = choose_gl_backend() == "osmesa" or not gpu_present()
    render_model = build_render_model(task_model, width, height, software=software)
    model_diff = compare_models(render_model, task_model)
    model_s = time.perf_counter() - t_model
    data = mujoco.MjData(render_model)
    renderer = open_renderer(render_model, width, height)
    font = overlay_font(overlay_font_size(width, height))

    output.parent.mkdir(parents=True, exist_ok=True)
    torch_threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as `sacscale evaluate`: the actor's numbers do not depend on the core count
    sim_s = render_s = encode_s = 0.0
    falls, n_frames, fell_at = 0, 0, None
    window: deque = deque(maxlen=GAIT_CYCLE_STEPS)
    seg_index = -1
    env = writer = tmp = None
    try:
        tmp = temporary_path(output)  # inside: a stop signal from here on (sacscale.cli) removes it
        env = G1WalkFlat(task_model, 1, 1, seed, config=cfg)  # one env, one physics thread
        writer = GuardedWriter(tmp, fps, output, max_bytes)
        env.command_override = np.array([segments[0].command], dtype=np.float64)
        obs, _ = env.reset()  # the first segment's command, as a reset assigns it
        w, x, y, z = env.qpos[0, 3:7]
        camera = FollowCamera(math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z)), fps)
        frame_iter = iter(frames_at)
        next_frame = next(frame_iter, None)
        for step in range(n_steps + 1):
            stopping.check()  # a stop raised where it was lost (sacscale.stopping) ends the video here
            seg = max(i for i, s in enumerate(starts) if s <= step)
            if seg != seg_index:  # a new segment: its command now, and after any reset
                seg_index = seg
                cmd = np.array([segments[seg].command], dtype=np.float64)
                env.commands[:] = cmd
                env.command_override = cmd.copy()
                obs, _ = env.observe()  # the observation the task gives with this command
            while next_frame == step:
                t = time.perf_counter()
                data.qpos[:] = env.qpos[0]
                data.qvel[:] = env.qvel[0]
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
            v = heading_frame_velocity(env.qpos, env.qvel)[0]
            v[2] = env.torso_yaw_rate()[0]  # the yaw rate the task tracks: the torso IMU's
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
        rename_into_place(tmp, output)  # another user's file put at its name while the video was made stays
    finally:
        try:
            if writer is not None:  # an error or a stop on the way: end the encoder (ffmpeg), then drop its file
                _drop_quietly(writer)
            if env is not None:
                env.close()
            renderer.close()
            torch.set_num_threads(torch_threads)
        finally:
            if tmp is not None:
                tmp.unlink(missing_ok=True)

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
        "model_sha256": model_sha256,
        "checkpoint_model_sha256": ckpt.get("model_sha256"),
        "render_model_differs_in": model_diff,
        "timing": {"model_s": model_s, "sim_s": sim_s, "render_s": render_s, "encode_s": encode_s,
                   "wall_s": time.perf_counter() - t0},
    }
