"""`sacscale render CHECKPOINT_OR_RUN --output walk.webp|walk.mp4|walk.gif`: a video of the
deterministic policy following a sequence of velocity commands (MuJoCo offscreen rendering,
Menagerie's meshes). Animated WebP (Pillow) is the small one, for evidence.

Headless OpenGL: MUJOCO_GL if set, else egl with an NVIDIA GPU, else osmesa (Debian:
apt-get install -y libosmesa6). run() exports MUJOCO_GL and PYOPENGL_PLATFORM before it
imports MuJoCo, because MuJoCo reads MUJOCO_GL when it is imported. Without the backend's
library: one line naming the package to install, exit 2, no file written.
"""

from __future__ import annotations

import argparse
import contextlib
import sys

from sacscale.commands._inputs import model_problem
from sacscale.commands import BadInput
from sacscale.commands._live_run import live_trainer_problem, run_folder_of
from sacscale.commands._output_lock import holding_outputs
from sacscale.eval.limits import video_length_problem, video_size_problem
from sacscale.eval import gl_backend, render
from sacscale.eval.evaluate_checks import CheckpointError, refuse_foreign_checkpoint
from sacscale.task.walk_rules import TaskConfig
from sacscale.usage import say


MAX_SECONDS = 3600  # an hour of video: far past any report's, still a frame count


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("checkpoint", metavar="CHECKPOINT_OR_RUN",
                        help="checkpoint (.pt) or run directory (uses RUN/checkpoints/final.pt)")
    add_video_arguments(parser)


def add_video_arguments(parser: argparse.ArgumentParser) -> None:
    """Everything but the policy: also `sacscale render-best`'s."""
    parser.add_argument("--output", required=True,
                        help="video to write (atomically): .webp (animated, Pillow), .mp4 (H.264) or .gif")
    parser.add_argument("--max-bytes", type=int, default=None,
                        help="a .webp is re-encoded at lower quality until it fits in this many bytes")
    parser.add_argument("--commands", default=render.DEFAULT_COMMANDS,
                        help="segments 'vx,vy,wz:SECONDS;...' (m/s, m/s, rad/s; heading frame), in order; "
                             f"the last one holds to the end (default {render.DEFAULT_COMMANDS!r})")
    parser.add_argument("--seconds", type=float, default=None,
                        help="video length (default: the segments' total)")
    parser.add_argument("--width", type=int, default=640, help="frame width in pixels (default 640)")
    parser.add_argument("--height", type=int, default=480, help="frame height in pixels (default 480)")
    parser.add_argument("--fps", type=float, default=25.0, help="frames per second, at most 50 (default 25)")
    parser.add_argument("--model", default=None,
                        help="compiled G1 task model (.mjb) to simulate; default: build it from the asset package")
    parser.add_argument("--seed", type=int, default=0, help="seed of the resets (position, heading, gait phase)")


def _say(args: argparse.Namespace, kind: str, msg: str) -> None:
    """One line on stderr in the name of the command that was run (render-best runs this one)."""
    say(f"{getattr(args, 'program', 'sacscale render')}: {kind}: {msg}", file=sys.stderr)


def _error(args: argparse.Namespace, msg: str) -> int:
    _say(args, "error", msg)
    return 2


def _checked_video_values(args: argparse.Namespace) -> list:
    """The command segments, once every value of the video is one it can have (ValueError
    naming the option otherwise)."""
    segments = render.parse_commands(args.commands)
    if args.seconds is not None and not (args.seconds > 0 and args.seconds < float("inf")):
        raise ValueError(f"--seconds {args.seconds:g}: must be > 0")
    render.check_video_args(args.output, args.width, args.height, args.fps)
    if args.max_bytes is not None and args.max_bytes <= 0:
        raise ValueError(f"--max-bytes {args.max_bytes}: must be > 0")
    length = args.seconds if args.seconds is not None else sum(s.seconds for s in segments)
    if length > MAX_SECONDS:  # a frame count past any video (1e308 s overflowed later)
        raise ValueError(f"--seconds / --commands: {length:g} s of video, at most {MAX_SECONDS}")
    seconds_from = "--seconds" if args.seconds is not None else "--commands"
    problem = video_length_problem(length, args.fps, seconds_from)
    if problem:  # one frame: the report's "best run's video" was a still of the start pose
        raise ValueError(problem)
    problem = video_size_problem(args.width, args.height, length, args.fps,
                                 ("--width", "--height", seconds_from, "--fps"))
    if problem:
        raise ValueError(problem)
    if not 0 <= args.seed < 2**32:
        raise ValueError(f"--seed {args.seed}: must be 0..{2**32 - 1}")
    return segments


def run(args: argparse.Namespace, output_held: bool = False) -> int:
    """Render; `output_held`: the caller (render-best) already holds --output's lock with its record's."""
    try:  # before anything in it is read: never through another user's link
        refuse_foreign_checkpoint(args.checkpoint)
    except CheckpointError as exc:
        return _error(args, str(exc))
    run_folder = run_folder_of(args.checkpoint)
    if run_folder and (live := live_trainer_problem(run_folder, "its checkpoint", "render")):
        return _error(args, f"{run_folder}: {live}")  # its final.pt is an earlier sitting's, not the run's end
    # Before anything imports MuJoCo: choose the GL backend (its libraries load, or one line).
    try:
        backend = gl_backend.configure_gl_backend()
    except gl_backend.GLBackendError as exc:
        return _error(args, str(exc))

    try:
        segments = _checked_video_values(args)
    except ValueError as exc:
        return _error(args, str(exc))
    problem = model_problem(args.model)  # a file that is not the task's model: named, before rendering
    if problem:
        return _error(args, problem)

    for warning in render.command_warnings(segments, TaskConfig()):
        _say(args, "warning", warning)
    try:
        with contextlib.nullcontext() if output_held else holding_outputs(("--output", args.output)):
            result = render.render_policy(args.checkpoint, args.output, model_path=args.model, segments=segments,
                                          seconds=args.seconds, width=args.width, height=args.height, fps=args.fps,
                                          seed=args.seed, max_bytes=args.max_bytes)
    except (BadInput, CheckpointError, ValueError, gl_backend.GLBackendError) as exc:
        return _error(args, str(exc))
    except gl_backend.RenderError as exc:
        _say(args, "error", str(exc))
        return 1

    t = result["timing"]
    say(f"{result['checkpoint']} (iteration {result['iteration']}, {result['env_steps']} env steps): "
        f"{result['frames']} frames {result['width']}x{result['height']} at {result['fps']:g} fps "
        f"({result['seconds']:g} s, {result['control_steps']} control steps, falls {result['falls']}), "
        f"MUJOCO_GL={backend}")
    say(f"wrote {result['output']} ({result['bytes'] / 1e6:.2f} MB); wall {t['wall_s']:.1f} s: "
        f"models {t['model_s']:.1f} s, physics+policy {t['sim_s']:.1f} s, rendering {t['render_s']:.1f} s, "
        f"encoding {t['encode_s']:.1f} s")
    if result["render_model_differs_in"]:
        _say(args, "warning", f"the render model's physics differs from the task model's in "
                              f"{', '.join(result['render_model_differs_in'])} (the motion shown is the task model's)")
    if result["checkpoint_model_sha256"] and result["checkpoint_model_sha256"] != result["model_sha256"]:
        _say(args, "warning", f"the model ({result['model_sha256'][:12]}) is not the one the checkpoint "
                              f"was trained on ({result['checkpoint_model_sha256'][:12]})")
    return 0
