"""The learner's first update, from a run's recorded config rather than from its events'
Loss/* steps (which a forger deletes at early steps), and the learner's tags held to it."""

from sacscale.analysis.events import Scalar
from sacscale.evidence.learner_start import first_learner_log, first_update_iteration, seed_alone_until
from sacscale.evidence.logged_tags import learner_start_problems

CONFIG = {"num_envs": 16, "batch_size": 128, "log_every": 4, "iterations": 24, "extra": {}}


def test_the_first_update_follows_the_trainers_learning_start():
    assert first_update_iteration(CONFIG) == 10  # max(128, 10 x 16) = 160 rows, 16 a rank an iteration
    assert first_update_iteration({**CONFIG, "batch_size": 2048}) == 128
    assert first_update_iteration({**CONFIG, "extra": {"batch_size": 400}}) == 25  # --extra overrides the batch
    assert first_update_iteration({**CONFIG, "extra": {"learning_starts": 33}}) == 3
    assert first_learner_log(CONFIG) == 12 and seed_alone_until(CONFIG) == 14
    assert first_learner_log({**CONFIG, "iterations": 11}) == 11  # the last iteration is logged too
    assert first_learner_log({**CONFIG, "batch_size": 2048}) == 128  # past the run's end: never
    for bad in (None, {}, {**CONFIG, "num_envs": "16"}, {**CONFIG, "num_envs": 0},
                {**CONFIG, "extra": {"learning_starts": -1}}):
        assert first_update_iteration(bad) is None


def _file(learner_steps) -> dict:
    steps = range(4, 25, 4)
    return {"Perf/rank_env_steps": [Scalar(s, 1.0, 16.0 * s) for s in steps],
            "Loss/critic": [Scalar(s, 1.0, 0.5) for s in learner_steps],
            "Train/alpha": [Scalar(s, 1.0, 0.1) for s in learner_steps]}


def test_the_learners_tags_start_where_the_config_says():
    why = "config"
    assert learner_start_problems(_file([12, 16, 20, 24]), 12, why) == []
    assert learner_start_problems(_file([24]), 12, why) == [
        "has no Loss/critic, Train/alpha at step 12, where the learner had updated (config) "
        "(and gaps at 2 other step(s))"]
    assert learner_start_problems(_file([8, 12, 16, 20, 24]), 12, why) == [
        "logs Loss/critic, Train/alpha at step 8, before the learner's first update (config)"]
    assert learner_start_problems(_file([]), 12, why) == []  # a tag a file never logs is not held here
