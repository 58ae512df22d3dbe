"""`sacscale render`: videos of a policy following a command sequence (GIF and MP4 decoded
back), the render model against the task model, the camera keeping the robot in view,
the command overlay, the GL backend choice, and clear errors for bad arguments.

Tiny runs: 160x120, 0.4 s at 25 fps (10 frames), a random-init policy. Skipped only when
no OpenGL context can be created (on Debian: apt-get install -y libosmesa6), failed then
with SACSCALE_REQUIRE_GL=1 (conftest.py)."""

import math
import os
import subprocess
import sys
from pathlib import Path

import mujoco
import numpy as np
import pytest
import torch

from sacscale.cli import main
from sacscale.eval import gl_backend as GL
from sacscale.eval import render as R
from sacscale.eval import render_model as RM
from sacscale.eval import video as V
from sacscale.learn.networks import Actor
from sacscale.task import g1_model as g1

W, H, FPS = 160, 120, 25
# two segments of 0.2 s: frames 0-4 show the first command, frames 5-9 the second
COMMANDS = "0.5,0,0:0.2;-0.4,0.3,0.6:0.2"
ACTOR_KWARGS = dict(obs_dim=98, action_dim=29, hidden=[32], log_std_min=-5.0, log_std_max=0.0, mean_clip=10.0)


def make_checkpoint(path, **changes):
    """A random-init actor in the `sacscale train` checkpoint format (small mean head)."""
    torch.manual_seed(0)
    actor = Actor(**ACTOR_KWARGS)
    torch.nn.init.normal_(actor.mean_head.weight, std=0.05)
    ckpt = {"format": "sacscale-checkpoint", "version": 1, "actor_kwargs": dict(ACTOR_KWARGS),
            "actor_flat": actor.flat_parameters(), "task": {"tilt_obs": "world"}, "iteration": 3,
            "env_steps": 99, "model_sha256": None}
    ckpt.update(changes)
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(ckpt, path)
    return path


@pytest.fixture(scope="module")
def videos(tmp_path_factory, gl, gl_environment):
    d = tmp_path_factory.mktemp("render")
    ckpt = make_checkpoint(d / "run" / "checkpoints" / "final.pt")
    out = {}
    with gl_environment(gl):
        for ext in ("gif", "mp4", "webp"):
            path = d / f"walk.{ext}"
            argv = ["render", str(d / "run") if ext == "gif" else str(ckpt), "--output", str(path), "--seconds",
                    "0.4", "--width", str(W), "--height", str(H), "--fps", str(FPS), "--commands", COMMANDS]
            assert main(argv) == 0
            out[ext] = path
    return out


def _decode(path):
    if path.suffix == ".webp":  # every frame, through Pillow (imageio reads an animated WebP's first)
        from PIL import Image, ImageSequence

        with Image.open(path) as im:
            return np.stack([np.asarray(f.convert("RGB")) for f in ImageSequence.Iterator(im)])
    if path.suffix == ".gif":
        import imageio.v3 as iio

        return iio.imread(path, index=None, plugin="pillow", mode="RGB")
    import imageio.v2 as iio2

    with iio2.get_reader(str(path), format="FFMPEG") as reader:
        return np.stack([reader.get_data(i) for i in range(reader.count_frames())])


@pytest.mark.parametrize("ext", ["gif", "mp4", "webp"])
def test_video_decodes_with_the_frames_asked_for(videos, ext):
    path = videos[ext]
    assert path.is_file() and path.stat().st_size > 1000
    assert not list(path.parent.glob(".walk*"))  # no temporary file left behind
    frames = _decode(path)
    assert frames.shape == (10, H, W, 3) and frames.dtype == np.uint8
    for f in frames:  # not one colour: floor, sky, robot
        assert f.reshape(-1, 3).std(axis=0).max() > 10


def _text_line_1(frame):
    """The first overlay line's left part: "cmd vx 0.50 vy" (the time further right is left out)."""
    size = V.overlay_font_size(W, H)
    pad, line_h = max(2, size // 3), int(size * 1.25)
    return frame[pad: pad + line_h, : int(W * 0.45)].astype(np.float64)


@pytest.mark.parametrize("ext", ["gif", "mp4", "webp"])
def test_command_overlay_changes_between_segments(videos, ext):
    frames = _decode(videos[ext])
    first, second = [_text_line_1(f) for f in frames[:5]], [_text_line_1(f) for f in frames[5:]]
    within = max(np.abs(a - b).mean() for seg in (first, second) for a in seg for b in seg)
    across = min(np.abs(a - b).mean() for a in first for b in second)
    assert across > 3 * within + 1.0, (within, across)


def test_overlay_text():
    assert V.overlay_lines([0.5, -0.0001, 0.0], 3.21, None, False) == ["cmd vx 0.50 vy 0.00 wz 0.00 | t 3.2 s"]
    lines = V.overlay_lines([0.0, 0.0, 0.6], 4.0, np.array([0.1, -0.02, 0.55]), True)
    assert lines[1] == "got vx 0.10 vy -0.02 wz 0.55 | fell: reset"
    frame = np.full((H, W, 3), 100, dtype=np.uint8)
    font = V.overlay_font(V.overlay_font_size(W, H))
    a = V.draw_overlay(frame, V.overlay_lines([0.5, 0, 0], 1.0, None, False), font)
    b = V.draw_overlay(frame, V.overlay_lines([0.0, 0, 0.6], 1.0, None, False), font)
    assert a.shape == frame.shape and (frame == 100).all()  # drawn on a copy
    assert (a[:, : W // 2] != b[:, : W // 2]).any() and (a[H // 2:] == 100).all()


@pytest.fixture(scope="module")
def models():
    task = g1.build_g1_model()
    return task, RM.build_render_model(task, W, H, software=True)


def test_render_model_is_the_task_model_with_visuals(models):
    task, rm = models
    assert (rm.nq, rm.nv, rm.nu) == (task.nq, task.nv, task.nu) == (36, 35, 29)
    assert RM.compare_models(rm, task) == []  # kinematics, dynamics, colliders, excludes, options
    assert rm.nmesh > 0 and rm.ngeom > task.ngeom and task.nmesh == 0
    # the same motion: a few control steps from a perturbed standing pose, same targets
    datas = [mujoco.MjData(m) for m in (task, rm)]
    rng = np.random.default_rng(0)
    qvel0 = rng.uniform(-0.5, 0.5, task.nv)
    for m, d in zip((task, rm), datas):
        mujoco.mj_resetDataKeyframe(m, d, m.key(g1.KEYFRAME).id)
        d.qvel[:] = qvel0
    for _ in range(10):
        for m, d in zip((task, rm), datas):
            d.ctrl[:] = g1.DEFAULT_JOINT_POS + 0.1
            mujoco.mj_step(m, d, nstep=g1.N_SUBSTEPS)
    np.testing.assert_allclose(datas[1].qpos, datas[0].qpos, atol=1e-8)
    with pytest.raises(ValueError, match="nq/nv"):
        RM.compare_models(rm, mujoco.MjModel.from_xml_string("<mujoco><worldbody/></mujoco>"))


def test_camera_keeps_the_robot_in_view(models, gl_env):
    """With the robot away from the origin, turned: its pixels (robot shown vs hidden)
    fill a good part of the frame, around its centre."""
    _, rm = models
    data = mujoco.MjData(rm)
    mujoco.mj_resetDataKeyframe(rm, data, rm.key(g1.KEYFRAME).id)
    data.qpos[:2] = [3.0, -2.0]
    data.qpos[3:7] = [math.cos(0.6), 0.0, 0.0, math.sin(0.6)]
    mujoco.mj_forward(rm, data)
    camera = V.FollowCamera(1.2, FPS)
    renderer = GL.open_renderer(rm, W, H)
    try:
        renderer.update_scene(data, camera=camera.follow(data.qpos[:2]))
        shown = renderer.render().astype(int)
        option = mujoco.MjvOption()
        option.geomgroup[2] = 0  # Menagerie's visual meshes
        renderer.update_scene(data, camera=camera.cam, scene_option=option)
        hidden = renderer.render().astype(int)
    finally:
        renderer.close()
    robot = np.abs(shown - hidden).max(axis=2) > 30
    assert robot.mean() > 0.03
    rows, cols = np.nonzero(robot)
    assert abs(cols.mean() - W / 2) < W * 0.15 and abs(rows.mean() - H / 2) < H * 0.25


def test_parse_commands_and_schedule():
    segs = R.parse_commands(" 0.5, 0, 0 : 4 ; 0,0,0.6:2.5;")
    assert segs == [R.Segment((0.5, 0.0, 0.0), 4.0), R.Segment((0.0, 0.0, 0.6), 2.5)]
    assert R.segment_starts(segs, 0.02) == [0, 200]
    assert R.frame_steps(0.4, 25, 0.02) == [0, 2, 4, 6, 8, 10, 12, 14, 16, 18]
    assert R.frame_steps(1.0, 12, 0.02)[:4] == [0, 4, 8, 12] and len(R.frame_steps(12, 12, 0.02)) == 144


@pytest.mark.parametrize("commands, message", [
    ("0.5,0,0:4;0,0:4", "segment 2 '0,0:4': expected 3 comma-separated values vx,vy,wz, got 2"),
    ("0.5,0,0", "segment 1 '0.5,0,0': expected 'vx,vy,wz:SECONDS'"),
    ("0.5,zero,0:4", "segment 1 '0.5,zero,0:4': not a number"),
    ("0.5,0,0:0", "duration must be > 0 s"),
    ("0.5,nan,0:1", "values must be finite"),
])
def test_bad_commands_exit_2_naming_the_problem(tmp_path, capsys, commands, message):
    ckpt = make_checkpoint(tmp_path / "ckpt.pt")
    out = tmp_path / "v.gif"
    code = main(["render", str(ckpt), "--output", str(out), "--commands", commands])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err.startswith("sacscale render: error: --commands") and message in err and "\n" not in err
    assert not out.exists()


def test_empty_commands_are_refused_as_every_empty_value_is(tmp_path, capsys):
    ckpt = make_checkpoint(tmp_path / "ckpt.pt")
    out = tmp_path / "v.gif"
    with pytest.raises(SystemExit) as stopped:
        main(["render", str(ckpt), "--output", str(out), "--commands", ""])
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert stopped.value.code == 2
    assert err == "sacscale render: error: argument --commands: an empty value (an unset variable?); give one, or " \
        "leave the option out"
    assert not out.exists()


@pytest.mark.parametrize("extra, message", [
    (["--output", "v.avi"], "must end in .webp or .mp4 or .gif"),
    (["--output", "v.mp4", "--width", "161"], "H.264 (.mp4) needs even sizes"),
    (["--output", "v.gif", "--fps", "60"], "--fps 60: must be 1..50"),
    (["--output", "v.gif", "--seconds", "0"], "--seconds 0: must be > 0"),
])
def test_bad_video_arguments_exit_2(tmp_path, capsys, extra, message):
    ckpt = make_checkpoint(tmp_path / "ckpt.pt")
    extra = [str(tmp_path / a) if a.startswith("v.") else a for a in extra]
    assert main(["render", str(ckpt), *extra]) == 2
    assert message in capsys.readouterr().err


def test_unusable_checkpoint_exits_2(tmp_path, capsys):
    assert main(["render", str(tmp_path / "nope.pt"), "--output", str(tmp_path / "v.gif")]) == 2
    assert "nope.pt: no such checkpoint file" in capsys.readouterr().err


def test_gl_backend_choice(monkeypatch):
    monkeypatch.setenv("PYOPENGL_PLATFORM", "")  # recorded, so restored after the test
    # both backends' libraries load: the choice alone, whatever this machine has installed
    monkeypatch.setattr(GL, "library_problem", lambda backend: None)
    monkeypatch.setenv("MUJOCO_GL", "EGL ")
    assert GL.choose_gl_backend() == "egl"
    for gpu, want in ((True, "egl"), (False, "osmesa")):
        monkeypatch.delenv("MUJOCO_GL")
        monkeypatch.delenv("PYOPENGL_PLATFORM", raising=False)
        monkeypatch.setattr(GL, "gpu_present", lambda gpu=gpu: gpu)
        assert GL.configure_gl_backend() == want
        assert os.environ["MUJOCO_GL"] == want and os.environ["PYOPENGL_PLATFORM"] == want


def test_cli_sets_the_backend_before_mujoco_is_imported(tmp_path, gl):
    """In a fresh process without MUJOCO_GL: `sacscale render` exports the backend before
    anything imports MuJoCo, so MuJoCo picks it up at import (which needs that backend's
    library: hence `gl`)."""
    code = (
        "import sys\n"
        "from sacscale.cli import main\n"
        f"assert main(['render', 'x.pt', '--output', {str(tmp_path / 'v.gif')!r}, '--commands', 'bad']) == 2\n"
        "assert 'mujoco' not in sys.modules\n"
        "import os, mujoco\n"
        "from mujoco.rendering.classic import gl_context\n"
        "print(os.environ['MUJOCO_GL'], os.environ['PYOPENGL_PLATFORM'], gl_context._MUJOCO_GL)\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("MUJOCO_GL", "PYOPENGL_PLATFORM")}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    want = "egl" if GL.gpu_present() else "osmesa"
    assert out.stdout.split() == [want, want, want]


# --- no GL shader disk cache: Mesa's llvmpipe stores compiled native code there and loads it back,
# so an inherited cache folder that another user can write would have a render run her code
def test_configure_turns_the_shader_caches_off_whatever_was_inherited(monkeypatch):
    monkeypatch.setattr(GL, "library_problem", lambda backend: None)
    monkeypatch.setenv("MUJOCO_GL", "osmesa")
    monkeypatch.setenv("PYOPENGL_PLATFORM", "osmesa")
    for name in GL.SHADER_CACHE_OFF:
        monkeypatch.setenv(name, "1" if name.startswith("__GL") else "false")  # recorded, so restored
    GL.configure_gl_backend()
    assert {name: os.environ[name] for name in GL.SHADER_CACHE_OFF} == {
        "MESA_SHADER_CACHE_DISABLE": "true", "MESA_GLSL_CACHE_DISABLE": "true", "__GL_SHADER_DISK_CACHE": "0"}


def _files_under(folder):
    return sorted(os.path.relpath(os.path.join(top, name), folder)
                  for top, _, names in os.walk(folder) for name in names)


def test_render_writes_no_shader_cache_in_the_inherited_cache_folders(tmp_path, gl):
    """`sacscale render` in a fresh process, with every cache folder Mesa would use inherited
    (and its switch inherited on): nothing is written there. Before the fix Mesa wrote
    mesa_shader_cache/ under XDG_CACHE_HOME."""
    ckpt = make_checkpoint(tmp_path / "run" / "checkpoints" / "final.pt")
    caches = {name: tmp_path / name for name in ("xdg", "home", "mesa_dir")}
    for folder in caches.values():
        folder.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("MUJOCO_GL", "PYOPENGL_PLATFORM")}
    env.update(XDG_CACHE_HOME=str(caches["xdg"]), HOME=str(caches["home"]),
               MESA_SHADER_CACHE_DIR=str(caches["mesa_dir"]), MESA_SHADER_CACHE_DISABLE="false",
               __GL_SHADER_DISK_CACHE="1", __GL_SHADER_DISK_CACHE_PATH=str(caches["mesa_dir"]))
    out = tmp_path / "v.gif"
    argv = ["render", str(ckpt), "--output", str(out), "--seconds", "0.2", "--fps", "10", "--width", "32",
            "--height", "32"]
    code = f"import sys\nfrom sacscale.cli import main\nsys.exit(main({argv!r}))\n"
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr
    assert out.is_file()
    assert {name: _files_under(folder) for name, folder in caches.items()} == {name: [] for name in caches}


def test_keep_visual_needs_the_excludes_copied():
    with pytest.raises(ValueError, match="exclude_rest_contacts=False"):
        g1.build_spec(keep_visual=True)


# --- the small video, and no OpenGL backend ------------------------------------------------------

REPO = Path(__file__).resolve().parents[2]
# a committed best-run video: 12 s of real rendered frames at 320x240, 10 fps
RENDERED = REPO / "reports" / "h200x1_learning_lowent" / "figures" / "best_run.gif"
VIDEO_BUDGET = 500_000  # the report's video: at most 0.5 MB for 12 s at 320x240


@pytest.mark.skipif(not RENDERED.is_file(), reason="the committed best-run video is not in this checkout")
def test_webp_of_rendered_frames_fits_the_video_budget(tmp_path):
    """The WebP writer on frames the renderer made (decoded from the committed GIF, so this
    runs without OpenGL): 12 s at 320x240 in at most 0.5 MB, every frame kept."""
    from PIL import Image, ImageSequence

    with Image.open(RENDERED) as gif:
        frames = [np.asarray(f.convert("RGB")) for f in ImageSequence.Iterator(gif)]
    assert len(frames) == 120 and frames[0].shape == (240, 320, 3)
    out = tmp_path / "best_run.webp"
    writer = V._WebpWriter(out, fps=10.0, max_bytes=VIDEO_BUDGET)
    for frame in frames:
        writer.append(frame)
    writer.close()
    assert out.stat().st_size <= VIDEO_BUDGET, out.stat().st_size
    assert out.stat().st_size < RENDERED.stat().st_size / 4  # the GIF was about 2 MB
    decoded = _decode(out)
    assert decoded.shape == (120, 240, 320, 3)
    assert np.abs(decoded.astype(float) - np.stack(frames)).mean() < 8  # the same pictures


class _NoContext:
    """Stands for a GL module whose library is missing: MuJoCo's Renderer cannot start."""
    _MUJOCO_GL = None


@pytest.mark.parametrize("backend, package, other", [("osmesa", "libosmesa6", "egl"), ("egl", "libegl1", "osmesa")])
def test_no_gl_backend_names_the_package_exits_2_and_leaves_no_file(tmp_path, capsys, monkeypatch, backend,
                                                                   package, other):
    def no_context(*args, **kwargs):
        raise RuntimeError(f"simulated: the {backend} library could not be loaded\nsecond line")

    context = _NoContext()
    context._MUJOCO_GL = backend  # as if mujoco had been imported with this backend
    monkeypatch.setenv("MUJOCO_GL", backend)
    monkeypatch.setenv("PYOPENGL_PLATFORM", backend)
    monkeypatch.setattr(GL, "_classic_gl_module", lambda: context)
    monkeypatch.setattr(GL, "library_problem", lambda backend: None)  # the libraries load; the context fails
    monkeypatch.setattr(mujoco, "Renderer", no_context)
    ckpt = make_checkpoint(tmp_path / "run" / "checkpoints" / "final.pt")
    videos = tmp_path / "videos"
    videos.mkdir()
    code = main(["render", str(ckpt), "--output", str(videos / "walk.webp"), "--seconds", "0.2",
                 "--width", "32", "--height", "24", "--fps", "10"])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert "\n" not in err and "Traceback" not in err, err
    assert err.startswith(f"sacscale render: error: no OpenGL context with MUJOCO_GL={backend}")
    assert f"apt-get install -y {package}" in err and f"MUJOCO_GL={other}" in err
    assert list(videos.iterdir()) == []  # no video, no partial or temporary file
