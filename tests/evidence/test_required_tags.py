"""The tags a rank must log at all, by what the run records (sacscale.evidence.required_tags):
every `Episode/*` value deleted from a 300-iteration run of 2048 envs passed verify, the
page's final return and length shown as n/a with no note; the tag checks hold only the tags
a file logs (sacscale.evidence.logged_tags)."""

import json

from event_times import event_file, without_tags
from set_copies import copy_committed_set, remake_manifest

from sacscale.analysis.events import Scalar
from sacscale.analysis.metrics import analyze_run
from sacscale.evidence.required_tags import OLDER_PHASE_TAGS, PHASE_TAGS, no_episode_chance, required_tag_problems
from sacscale.evidence.verify import verify

SET = "h200x1_shared_short"
RUN = "shared_r1_n1_pool7"
EPISODE = ("Episode/return", "Episode/length", "Episode/fall_rate")


def test_episode_tags_removed_from_every_step_are_named(tmp_path):
    root = copy_committed_set(tmp_path, SET)
    run = root / "runs" / RUN
    without_tags(event_file(run), lambda tag: tag.startswith("Episode/"))
    (root / "metrics" / f"{RUN}.json").write_text(json.dumps(analyze_run(run), indent=1))
    remake_manifest(root)
    assert (f"{RUN}: tb/rank0 logs no Episode/return, Episode/length, Episode/fall_rate at any step, though its 2048 "
            "envs stepped 300 times each (iterations 1..300): the trainer writes the episode tags at each log point "
            "whose interval ended an episode, and with time-outs drawn over the task's 1000-step episode none ends "
            "with chance 5.8e-318 (below 1e-09): the episode tags were removed") in verify(root).records


def test_the_chance_that_no_env_ended_an_episode():
    assert no_episode_chance(10, 2048) > 1e-9 > no_episode_chance(11, 2048)
    assert no_episode_chance(726, 16) > 1e-9 > no_episode_chance(727, 16)
    assert no_episode_chance(1000, 1) == 0.0 == no_episode_chance(5000, 1)


def _file(last: int, tags=(), first: int = 2, every: int = 2) -> dict[str, list[Scalar]]:
    steps = range(first, last + 1, every)
    return {tag: [Scalar(s, float(s), 1.0) for s in steps] for tag in ("Perf/rank_env_steps", *tags)}


def _meta(num_envs: int, trace: bool, iterations: int, sittings: list | None = None) -> dict:
    meta = {"config": {"num_envs": num_envs, "trace": trace, "log_every": 2, "iterations": iterations},
            "start_time": 1.0}
    return {**meta, "sittings": sittings} if sittings else meta


def test_a_run_too_short_to_end_an_episode_needs_no_episode_tags():
    """16 envs for 24 iterations (a CPU run): none ended an episode with chance 0.68."""
    assert required_tag_problems("r", _meta(16, False, 24), {0: [(None, _file(24))]}, True) == []
    (line,) = required_tag_problems("r", _meta(16, False, 800), {0: [(None, _file(800))]}, True)
    assert line.startswith("r: tb/rank0 logs no Episode/return, Episode/length, Episode/fall_rate at any step, "
                           "though its 16 envs stepped 800 times each (iterations 1..800)"), line


def test_a_set_of_this_code_is_held_to_this_trainers_tags_an_older_one_to_every_versions():
    older_trainer = _file(300, ("Episode/return", "Episode/length", *OLDER_PHASE_TAGS))
    files = {0: [(None, older_trainer)]}
    assert required_tag_problems("r", _meta(2048, True, 300), files, strict=False) == []
    assert required_tag_problems("r", _meta(2048, True, 300), files, strict=True) == [
        "r: tb/rank0 logs no Episode/fall_rate at any step, though its 2048 envs stepped 300 times each (iterations "
        "1..300): the trainer writes the episode tags at each log point whose interval ended an episode, and with "
        "time-outs drawn over the task's 1000-step episode none ends with chance 5.8e-318 (below 1e-09): the episode "
        "tags were removed",
        "r: tb/rank0 logs no Time/collector_physics_ms, Time/collector_physics_wait_ms at any step, though the sitting "
        "was traced (train_meta.json config.trace true): the trainer writes every phase time at each log point of a "
        "traced sitting"]
    untraced = _file(300, EPISODE)
    assert required_tag_problems("r", _meta(2048, False, 300), {0: [(None, untraced)]}, strict=True) == []
    (line,) = required_tag_problems("r", _meta(2048, True, 300), {0: [(None, untraced)]}, strict=True)
    assert line.startswith("r: tb/rank0 logs no Time/collector_env_step_ms, Time/collector_action_select_ms, "
                           f"Time/collector_replay_write_ms and {len(PHASE_TAGS) - 3} more at any step"), line


def test_a_resumed_run_is_held_sitting_by_sitting():
    """Trace on only in the second sitting (the first sitting of a resumed run records no
    trace of its own); each sitting's envs time out anew from its start."""
    sittings = [{"from_iteration": 20, "start_time": 2.0, "config": {"log_every": 2, "trace": True}}]
    meta = _meta(16, True, 40, sittings)
    first, second = _file(20, EPISODE), _file(40, (*EPISODE, *PHASE_TAGS), first=22)
    assert required_tag_problems("r", meta, {0: [(None, second), (None, first)]}, True) == []
    (line,) = required_tag_problems("r", meta, {0: [(None, first), (None, _file(40, EPISODE, first=22))]}, True)
    assert line.startswith("r: tb/rank0 (sitting 2 of 2) logs no Time/collector_env_step_ms") and \
        "(train_meta.json sittings[0].config.trace true)" in line, line
    many = _meta(2048, True, 40, sittings)
    (line,) = required_tag_problems("r", many, {0: [(None, first), (None, _file(40, PHASE_TAGS, first=22))]}, True)
    assert line.startswith("r: tb/rank0 (sitting 2 of 2) logs no Episode/return, Episode/length, Episode/fall_rate "
                           "at any step, though its 2048 envs stepped 20 times each (iterations 21..40)"), line
