"""A video's pixels over all its frames are bounded (sacscale.eval.limits.video_size_problem),
at planning and by `sacscale render` / `render-best` alike. Before, `video: {width: 4096,
height: 4096, seconds: 60, fps: 50}` planned, and its render ran for hours after every run
had trained, to a file far past the report's budget (--max-bytes is best effort)."""

from pathlib import Path

import pytest
import yaml

from sacscale.cli import main
from sacscale.eval.limits import MAX_PIXEL_FRAMES, video_size_problem
from sacscale.pipeline.runplan import Host, PlanError, resolve

ROOT = Path(__file__).resolve().parents[2]
PRESETS = yaml.safe_load((ROOT / "workflow" / "presets.yaml").read_text())
SCHEMA = yaml.safe_load((ROOT / "workflow" / "schemas" / "config.schema.yaml").read_text())
CPU_BOX = Host(cuda_devices=0, cpus=frozenset(range(2)))
SIZE = ("width", "height", "seconds", "fps")


def plan(video):
    return resolve({"preset": "cpu", "video": {"enabled": True, **video}}, PRESETS, CPU_BOX)


def test_planning_refuses_a_video_of_hours_naming_the_keys():
    with pytest.raises(PlanError) as info:
        plan({"width": 4096, "height": 4096, "seconds": 60, "fps": 50})
    assert str(info.value) == (
        "video.width x video.height x video.seconds x video.fps: 4096x4096 pixels, 60 s at 50 fps: "
        "50,331,648,000 pixel-frames, more than the 100,000,000 a video may hold (the report's: 320x240 at 10 fps "
        "for 12 s, 9,216,000); make it smaller, shorter or slower")


def test_the_schema_defaults_and_the_render_defaults_fit():
    defaults = {key: SCHEMA["properties"]["video"]["properties"][key]["default"] for key in SIZE}
    assert defaults == {"width": 320, "height": 240, "seconds": 12, "fps": 10}  # the committed sets' videos
    plan(defaults)
    plan({"width": 640, "height": 480, "seconds": 12, "fps": 25})  # `sacscale render`'s own defaults
    assert video_size_problem(640, 480, 12, 25) is None
    assert f"at most {MAX_PIXEL_FRAMES:,} pixel-frames" in SCHEMA["properties"]["video"]["description"]


def test_the_bound_is_on_the_frames_made():
    assert video_size_problem(1000, 1000, 2, 50) is None  # 100 frames of a million pixels: the bound itself
    assert video_size_problem(1000, 1000, 2.02, 50) is not None  # one frame more
    assert MAX_PIXEL_FRAMES == 100 * 1000 * 1000


def test_render_refuses_it_before_rendering(tmp_path, capsys):
    out = tmp_path / "v.webp"
    code = main(["render", str(tmp_path / "ckpt.pt"), "--output", str(out), "--width", "4096", "--height", "4096",
                 "--seconds", "1", "--fps", "50"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and not out.exists()
    assert err == ("sacscale render: error: --width x --height x --seconds x --fps: 4096x4096 pixels, 1 s at 50 fps: "
                   "838,860,800 pixel-frames, more than the 100,000,000 a video may hold (the report's: 320x240 at 10 "
                   "fps for 12 s, 9,216,000); make it smaller, shorter or slower")


def test_render_best_names_the_commands_when_they_give_the_length(tmp_path, capsys):
    (tmp_path / "runs").mkdir()
    evaluation = tmp_path / "eval" / "r.json"
    evaluation.parent.mkdir()
    evaluation.write_text('{"overall": {"normalised_tracking": {"lin_vel_xy": 0.5, "yaw_rate": 0.5}, '
                          '"fall_rate": 0.0}, "env_steps": 1}')
    code = main(["render-best", "--evaluations", str(evaluation), "--runs-dir", str(tmp_path / "runs"), "--output",
                 str(tmp_path / "best.webp"), "--record", str(tmp_path / "best.json"), "--width", "2048", "--height",
                 "2048", "--fps", "50"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and not (tmp_path / "best.webp").exists() and not (tmp_path / "best.json").exists()
    assert err[-1].startswith("sacscale render-best: error: --width x --height x --commands x --fps: 2048x2048 "
                              "pixels, 12 s at 50 fps: 2,516,582,400 pixel-frames, more than the 100,000,000")
