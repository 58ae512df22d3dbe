"""Config values that the schema lets through but the commands taking them refuse: planning
holds evaluation.seconds, video.fps and the video's frames to the bounds of `sacscale evaluate` and
`sacscale render-best` (sacscale.eval.limits), so the set is refused before any run trains; and a
video asked for without the evaluations it is chosen by, once planned away without a word."""

from pathlib import Path

import pytest
import yaml

from sacscale.eval.limits import fps_problem, seconds_problem, video_length_problem
from sacscale.pipeline.runplan import Host, PlanError, resolve

ROOT = Path(__file__).resolve().parents[2]
PRESETS = yaml.safe_load((ROOT / "workflow" / "presets.yaml").read_text())
CPU_BOX = Host(cuda_devices=0, cpus=frozenset(range(2)))


def plan(config):
    return resolve({"preset": "cpu", **config}, PRESETS, CPU_BOX)


@pytest.mark.parametrize("config, message", [
    ({"video": {"enabled": True, "fps": 0.5}}, "video.fps 0.5: must be 1..50 (the control rate)"),
    ({"video": {"enabled": True, "seconds": 0.01, "fps": 1}},
     "video.seconds 0.01 at video.fps 1: 1 frame, a still picture; a video has at least 2 (seconds x fps >= 1.5)"),
    ({"video": {"enabled": True, "seconds": 1, "fps": 1}}, "video.seconds 1 at video.fps 1: 1 frame"),
    ({"evaluation": {"seconds": 1.0001}},
     "evaluation.seconds 1.0001: must be at least one control step (0.02 s) longer than the 1 s not scored"),
    ({"evaluation": {"seconds": 1.01}}, "evaluation.seconds 1.01: must be at least one control step"),
])
def test_planning_refuses_what_the_command_would(config, message):
    with pytest.raises(PlanError) as info:
        plan(config)
    assert str(info.value).startswith(message)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("config", [
    {"video": {"enabled": True, "fps": 1}},
    {"video": {"enabled": True, "fps": 50}},
    {"video": {"enabled": True, "seconds": 0.04, "fps": 50}},
    {"video": {"enabled": True, "seconds": 2, "fps": 1}},
    {"evaluation": {"seconds": 1.02}},
    {"evaluation": {"seconds": 20}},
    {"evaluation": {"seconds": None}},
])
def test_planning_keeps_what_the_command_takes(config):
    plan(config)


@pytest.mark.parametrize("seconds", [1.0001, 1.01, 1.02, 1.5, 20, 20.01])
def test_planning_and_evaluate_share_one_bound(seconds):
    refused = seconds_problem(seconds) is not None
    try:
        plan({"evaluation": {"seconds": seconds}})
    except PlanError:
        assert refused
    else:
        assert not refused


def test_the_commands_messages_name_their_flags():
    assert fps_problem(0.5) == "--fps 0.5: must be 1..50 (the control rate)"
    assert seconds_problem(1.0001, 1.0) == ("--seconds 1.0001: must be at least one control step (0.02 s) "
                                            "longer than the 1 s not scored (--settle-s 1.0)")
    assert seconds_problem(5, -1) == "--settle-s -1: must be >= 0"
    assert seconds_problem(2, 1) is None
    assert video_length_problem(0.2, 10) is None  # two frames: the shortest video
    assert video_length_problem(0.1, 10).startswith("--seconds 0.1 at --fps 10: 1 frame, a still picture")


def test_a_video_without_the_evaluations_it_is_chosen_by_is_refused():
    with pytest.raises(PlanError) as info:
        plan({"video": {"enabled": True}, "evaluation": {"enabled": False}})
    assert str(info.value) == ("video.enabled: true needs evaluation.enabled, which is false: the video shows the "
                               "best-evaluated run's policy; enable the evaluation or set video.enabled to false")


@pytest.mark.parametrize("video", [False, None])
def test_no_video_or_the_default_one_plans_without_evaluations(video):
    plan({"video": {"enabled": video}, "evaluation": {"enabled": False}})
