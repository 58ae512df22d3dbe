"""`verify-env --plan` checks again where the runs run; with `host_checks: false` (planning
off the run host) the CPU replay memory check was made nowhere before the run: a plan whose
CPU runs' replays cannot fit passed verify-env (rc 0) and the first run was refused by the
trainer after the model and the probe. Now verify-env names it with the configuration's key."""

from test_verify_env import verify_env

TOO_LARGE = {"preset": "cpu", "run_configs": {"n1_cpu": {"num_envs": 4096, "overrides": {"replay-per-env": 1_048_576}}}}


def test_a_cpu_replay_larger_than_this_machines_memory_fails_verify_env(tmp_path):
    proc, env = verify_env(tmp_path, TOO_LARGE)
    assert proc.returncode == 1, proc.stderr
    assert env["ok"] is False and len(env["problems"]) == 1, env["problems"]
    assert env["problems"][0].startswith("run_configs.n1_cpu.num_envs: 4096 envs x 1048576 replay rows per env "
                                         "(overrides.replay-per-env): the replay of 1 rank(s) on the CPU needs ")
    assert "more than this machine's" in env["problems"][0] and env["problems"][0] in proc.stderr


def test_a_replay_that_fits_passes(tmp_path):
    proc, env = verify_env(tmp_path, {"preset": "cpu"})
    assert proc.returncode == 0 and env["problems"] == [], proc.stderr
