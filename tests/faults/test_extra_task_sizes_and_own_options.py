"""`--extra` (and a config's `overrides.extra`) took any learner setting, after the run's own
sizes: `{"action_dim": 3}` built a learner of another shape than the task's (a 30-line
traceback in the collector, a half-made run folder); `{"batch_size": 7}` trained on batches of
7 while run.json and train_meta.json said the option's 128; `{"replay_per_env": 2000000000}`
passed planning's and verify-env's replay memory check, which read the option. Now the task's
sizes and the settings with their own option are refused there, one line naming the key and
where its value comes from, before anything is made (train: exit 2)."""

import pytest
from test_bad_input import run_cli

from sacscale.train import TrainConfig, TrainingError, sac_config

TASK_SIZE = "the task's own size, which its model fixes; not a learner setting to give"
OWN = "set by the trainer's own option {} (which the run's records and checks read); give it there, not in --extra"

REFUSED = [
    ({"action_dim": 3}, f"--extra action_dim: {TASK_SIZE}"),
    ({"actor_obs_dim": 2}, f"--extra actor_obs_dim: {TASK_SIZE}"),
    ({"critic_obs_dim": 101}, f"--extra critic_obs_dim: {TASK_SIZE}"),  # even the task's own value
    ({"batch_size": 7}, "--extra batch_size: " + OWN.format("--batch-size")),
    ({"replay_per_env": 2000000000}, "--extra replay_per_env: " + OWN.format("--replay-per-env")),
    ({"critic_updates": 1}, "--extra critic_updates: " + OWN.format("--num-critic-updates")),
    ({"actor_update_at": [0]}, "--extra actor_update_at: " + OWN.format("--num-actor-updates")),
    ({"obs_norm": True}, "--extra obs_norm: " + OWN.format("--obs-norm")),
]


@pytest.mark.parametrize("extra, message", REFUSED, ids=[next(iter(e)) for e, _ in REFUSED])
def test_the_learner_config_refuses_the_key(extra, message):
    with pytest.raises(TrainingError) as exc:
        sac_config(TrainConfig(extra={"gamma": 0.9, **extra}))
    assert str(exc.value) == message


@pytest.mark.parametrize("extra, message", REFUSED[:1] + REFUSED[3:5], ids=["action_dim", "batch_size", "replay"])
def test_train_refuses_it_in_one_line_before_anything_is_made(tmp_path, capsys, extra, message):
    import json

    code, err, _ = run_cli(tmp_path, capsys, "--extra", json.dumps(extra))  # run_cli: no run folder made
    assert code == 2 and err.strip() == f"sacscale train: error: {message}", err


def test_other_learner_settings_still_pass():
    sac = sac_config(TrainConfig(batch_size=64, extra={"target_entropy": -14.5, "gamma": 0.9}))
    assert (sac.target_entropy, sac.gamma, sac.batch_size) == (-14.5, 0.9, 64)
