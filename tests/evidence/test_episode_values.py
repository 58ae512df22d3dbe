"""Each rank's Episode/* values held to what the trainer can log (sacscale.evidence.episode_values).
Values written into a run's own event file at a logged step, with its derived files made
again, passed verify: a return of 1,000,000 in a 5-step episode, a negative length, a fall
rate of 7."""

from pathlib import Path

from set_copies import event_records, remake_manifest

from sacscale.analysis.events import Scalar
from sacscale.evidence.episode_values import episode_value_problems, file_problems, reward_ceiling
from sacscale.evidence.verify import verify
from sacscale.task.walk_rules import TaskConfig

RUN = "runs/shared_r1_n1_pool7"


def _rewrite(root: Path, step: int, values: dict[str, float]) -> str:
    """The run's rank-0 episode values at `step` replaced (same step and wall time), written
    with TensorBoard's own record writer, the manifest made again; the file's name."""
    from tensorboard.summary.writer.record_writer import RecordWriter

    (path,) = (root / RUN / "tb/rank0").glob("events.out.tfevents.*")
    events = event_records(path)
    for event in events:
        for value in event.summary.value if event.step == step else ():
            if value.tag in values:
                value.simple_value = values[value.tag]
    with path.open("wb") as out:
        writer = RecordWriter(out)
        for event in events:
            writer.write(event.SerializeToString())
    remake_manifest(root)
    return path.name


def _named(root: Path, step: int, values: dict[str, float]) -> list[str]:
    name = _rewrite(root, step, values)
    head = f"shared_r1_n1_pool7: tb/rank0/{name} logs "
    return [r.removeprefix(head) for r in verify(root).records if r.startswith(head)]


def test_a_fall_rate_outside_0_1_is_named(work):
    assert _named(work, 300, {"Episode/fall_rate": 7.0}) == [
        "Episode/fall_rate 7 at step 300: a share of the ended episodes, in [0, 1]: the trainer cannot log that"]


def test_a_length_below_1_or_past_the_episode_is_named(work):
    assert _named(work, 300, {"Episode/length": -3.0, "Episode/return": -5.0}) == [
        "Episode/length -3 at step 300: an episode lasts 1 step or more, and the sitting's envs have stepped 300 "
        "time(s) since iteration 0: the trainer cannot log that"]


def test_a_length_past_the_steps_taken_is_named(work):
    assert _named(work, 20, {"Episode/length": 24.0}) == [
        "Episode/length 24 at step 20: an episode lasts 1 step or more, and the sitting's envs have stepped 20 "
        "time(s) since iteration 0: the trainer cannot log that"]


def test_a_length_past_the_task_episode_is_named():
    series = {"Episode/length": [Scalar(5000, 0.0, 1001.0)]}
    assert file_problems(series, 0) == [
        "Episode/length 1001 at step 5000: an episode lasts 1 step or more, and the task's episode_length is 1000"]
    assert file_problems({"Episode/length": [Scalar(5000, 0.0, 1000.0)]}, 0) == []


def test_a_return_past_the_task_reward_is_named(work):
    assert _named(work, 300, {"Episode/return": 1e6, "Episode/length": 5.0}) == [
        "Episode/return 1000000 at step 300: above 0.37 (the task's largest reward a step) x its Episode/length 5: "
        "the trainer cannot log that"]


def test_the_reward_ceiling_is_each_positive_weight_at_a_term_of_1():
    cfg = TaskConfig()
    positive = {term for term, weight in cfg.reward_weights.items() if weight > 0}
    assert positive == {"tracking_lin_vel", "tracking_ang_vel", "feet_phase", "alive"}
    assert abs(reward_ceiling() - 0.02 * (2.0 + 1.5 + 5.0 + 10.0)) < 1e-12
    at_ceiling = {"Episode/return": [Scalar(300, 0.0, reward_ceiling() * 50)],
                  "Episode/length": [Scalar(300, 0.0, 50.0)]}
    assert file_problems(at_ceiling, 0) == []


def test_a_resumed_sitting_counts_its_steps_from_its_start():
    series = {"Episode/length": [Scalar(120, 0.0, 30.0)]}
    meta = {"sittings": [{"from_iteration": 100, "config": {}}], "config": {}}
    files = {0: [(Path("a"), {}), (Path("b"), series)]}
    assert episode_value_problems("r", meta, files) == [
        "r: tb/rank0/b logs Episode/length 30 at step 120: an episode lasts 1 step or more, and the sitting's envs "
        "have stepped 20 time(s) since iteration 100: the trainer cannot log that"]


def test_a_legitimate_set_names_no_episode_value(work):
    assert not [r for r in verify(work).records if "Episode/" in r and "cannot log" in r]


def test_a_value_just_past_its_bound_is_shown_past_it():
    """A fall rate of 1.0000001 read `1` in the line that called it out of [0, 1]."""
    series = {"Episode/fall_rate": [Scalar(10, 1000.0, 1.0000001)]}
    assert file_problems(series, 0)[0].startswith("Episode/fall_rate 1.0000001 at step 10")
