"""A run configuration's `overrides.extra` that gives the task's sizes or a setting with its
own option planned: `{"action_dim": 3}` then died in the run's collector, `{"batch_size": 7}`
trained on batches the records did not say, and `{"replay_per_env": 2000000000}` passed the
replay memory check (planning's and verify-env's, which read `overrides.replay-per-env`).
Now planning refuses each naming the config key and where the value goes, and verify-env
names one in a hand-edited plan."""

import pytest
from test_config_breaks_a_run_later import plan
from test_verify_env_plan_values_unread import verify_edited_plan

from sacscale.pipeline.runplan import PlanError

KEY = "run_configs.n1_cpu.overrides.extra"
OWN = "is set by the trainer's own option {} (which the run's records and checks read): give it as {}, not in extra"


@pytest.mark.parametrize("extra, message", [
    ('{"action_dim": 3}', "action_dim is the task's own size, which its model fixes; not a learner setting to give"),
    ('{"batch_size": 7}', "batch_size " + OWN.format("--batch-size", "the run configuration's batch_size")),
    ('{"replay_per_env": 2000000000}', "replay_per_env " + OWN.format("--replay-per-env", "overrides.replay-per-env")),
    ('{"critic_updates": 1}', "critic_updates " + OWN.format("--num-critic-updates", "overrides.num-critic-updates")),
    ('{"obs_norm": true}', "obs_norm " + OWN.format("--obs-norm", "overrides.obs-norm")),
], ids=["action_dim", "batch_size", "replay", "critic_updates", "obs_norm"])
def test_planning_refuses_the_key_naming_where_it_goes(extra, message):
    with pytest.raises(PlanError) as exc:
        plan(run_configs={"n1_cpu": {"overrides": {"extra": extra}}})
    assert str(exc.value) == f"{KEY}: {message}"


def test_the_committed_presets_extra_still_plans():
    overrides = {"obs_norm": True, "extra": '{"target_entropy": -14.5}'}
    planned = plan(run_configs={"n1_cpu": {"overrides": overrides}}).as_dict()
    assert planned["run_configs"]["n1_cpu"]["overrides"]["extra"] == '{"target_entropy": -14.5}'


def test_verify_env_names_a_replay_size_in_a_hand_edited_plans_extra(tmp_path):
    proc, problems = verify_edited_plan(
        tmp_path, lambda rc: rc["overrides"].update(extra='{"replay_per_env": 2000000000}'))
    assert proc.returncode == 1 and problems == [
        f"{KEY}: replay_per_env " + OWN.format("--replay-per-env", "overrides.replay-per-env")], proc.stderr
