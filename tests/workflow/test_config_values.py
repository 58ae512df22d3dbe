"""Config values that pass a loose schema but would break later: names matched in full
and short, no control characters, finite numbers, bounded sizes checked before anything
is expanded, trainer options checked at planning time naming the key, and config files
with duplicate keys or YAML alias bombs refused quickly (sacscale.pipeline.config_check)."""

import time
from pathlib import Path

import pytest
import yaml

from sacscale.pipeline import config_check
from sacscale.pipeline.runplan import Host, PlanError, check_config, resolve

ROOT = Path(__file__).resolve().parents[2]
PRESETS = yaml.safe_load((ROOT / "workflow" / "presets.yaml").read_text())
SCHEMA = yaml.safe_load((ROOT / "workflow" / "schemas" / "config.schema.yaml").read_text())
CPU_BOX = Host(cuda_devices=0, cpus=frozenset(range(2)))


def plan(config):
    return resolve({"preset": "cpu", **config}, PRESETS, CPU_BOX)


def run_config(**fields):
    return {"run_configs": {"n1_cpu": fields}}


@pytest.mark.parametrize("config, message", [
    ({"run_set": "good\n"}, "run_set: holds a control character ('\\n')"),
    ({"run_set": "x" * 65}, "run_set: 'xxxxx"),
    ({"prefix": "p\n"}, "prefix: holds a control character"),
    ({"prefix": "p q"}, "prefix: 'p q' is not a valid name"),
    ({"run_configs": {"n1\n": {"devices": "cpu"}}, "order": ["n1\n"]}, "control character"),
    (run_config(devices="cpu\n"), "run_configs.n1_cpu.devices: holds a control character"),
    (run_config(devices="0," * 70 + "0"), "run_configs.n1_cpu.devices: '0,0,"),
    (run_config(description="a\x1b[2Jb"), "run_configs.n1_cpu.description: holds a control character"),
    (run_config(env={"X": "1\n2"}), "run_configs.n1_cpu.env.X: holds a control character"),
    (run_config(env={"BAD-NAME": "1"}), "run_configs.n1_cpu.env: 'BAD-NAME' is not an environment variable name"),
    (run_config(timeout_s=float("inf")), "run_configs.n1_cpu.timeout_s: inf is not a finite number"),
    (run_config(timeout_s=float("nan")), "run_configs.n1_cpu.timeout_s: nan is not a finite number"),
    (run_config(timeout_s=10**12), "run_configs.n1_cpu.timeout_s: must be a number of seconds in"),
    ({"model_timeout_s": float("inf")}, "model_timeout_s: inf is not a finite number"),
    # what Snakemake makes of `--config iterations=<5,000 digits>`: named as an overflow
    ({"iterations": float("inf")}, "iterations: inf is not a finite number (a number too large for a float"),
    (run_config(cpu_pools="0-4000000000"), "run_configs.n1_cpu.cpu_pools: rank 0: '0-4000000000' is not a CPU list"),
    (run_config(cpu_pools="0-99999"), "run_configs.n1_cpu.cpu_pools: rank 0: '0-99999': CPUs are numbered 0-8191"),
    (run_config(cpu_pools="5-1"), "ranges low-high"),
    (run_config(cpu_pools="0-1,1"), "run_configs.n1_cpu.cpu_pools: rank 0: '0-1,1' names CPU(s) 1 twice; name each"),
    (run_config(num_envs=10**9), "run_configs.n1_cpu.num_envs: must be an integer >= 1 and <= 1048576"),
    ({"repeats": 10**12}, "repeats: must be an integer >= 1 and <= 1000"),
    ({"iterations": 10**12}, "iterations: must be an integer >= 1 and <= 1000000000"),
    ({"seed": 2**31 - 100_000, "repeats": 2}, "seed: must be an integer >= 0 and <= 2147383647"),
    (run_config(overrides={"extra": '{"gamma": 2}'}),
     "run_configs.n1_cpu.overrides.extra: --extra gamma must be in [0, 1], got 2"),
    # a negative mean_clip trained a state-independent policy; a +-1e308 support overflowed in the run
    (run_config(overrides={"extra": '{"mean_clip": -1}'}),
     "run_configs.n1_cpu.overrides.extra: --extra mean_clip must be in [0.1, 100], got -1"),
    (run_config(overrides={"extra": '{"v_min": -1e308, "v_max": 1e308}'}),
     "run_configs.n1_cpu.overrides.extra: --extra v_min must be in [-10000, 10000], got -1e+308"),
    (run_config(overrides={"num_critic_updates": 5000}),
     "run_configs.n1_cpu.overrides.num_critic_updates: --num-critic-updates must be at most 1,024, got 5000"),
    (run_config(overrides={"extra": '{"gamma": 0.9'}), "run_configs.n1_cpu.overrides.extra: argument --extra"),
    (run_config(overrides={"extra": "[1, 2]"}), "run_configs.n1_cpu.overrides.extra: --extra must be a JSON object"),
    (run_config(overrides={"extra": '{"no_such": 1}'}), "run_configs.n1_cpu.overrides.extra: --extra: unknown"),
    (run_config(overrides={"timeout-s": "soon"}), "run_configs.n1_cpu.overrides.timeout-s: argument --timeout-s"),
    (run_config(overrides={"timeout-s": "nan"}), "run_configs.n1_cpu.overrides.timeout-s: 'nan' is not a finite"),
    (run_config(overrides={"checkpoint-every": 2.5}), "run_configs.n1_cpu.overrides.checkpoint-every: argument"),
    (run_config(overrides={"obs-norm": "yes"}), "run_configs.n1_cpu.overrides.obs-norm: unrecognized arguments: yes"),
    (run_config(overrides={"env-pipeline": "sideways"}),
     "run_configs.n1_cpu.overrides.env-pipeline: argument --env-pipeline: invalid choice: 'sideways'"),
    (run_config(overrides={"grad_sync": "sometimes"}),
     "run_configs.n1_cpu.overrides.grad_sync: argument --grad-sync: invalid choice: 'sometimes'"),
    (run_config(overrides={"min-free-mb": -1}),
     "run_configs.n1_cpu.overrides.min-free-mb: --min-free-mb must be in [0, 1073741824]"),
])
def test_bad_values_are_refused_at_planning_naming_the_key(config, message):
    t0 = time.monotonic()
    with pytest.raises(PlanError) as err:
        plan(config)
    assert message in str(err.value)
    assert "\n" not in str(err.value) and time.monotonic() - t0 < 30


def test_names_are_matched_in_full():
    from sacscale.pipeline import runplan

    for pattern, good in ((runplan.NAME, "n1_cpu"), (runplan.DEVICES, "0,1"), (runplan.ENV_NAME, "NCCL_X"),
                          (runplan.CPU_LIST, "0-3,8"), (runplan.HYDRA_KEY, "algo.gamma")):
        assert pattern.fullmatch(good) and not pattern.fullmatch(good + "\n")


def test_good_trainer_options_pass():
    p = plan(run_config(overrides={"extra": '{"gamma": 0.97}', "timeout-s": 30, "obs-norm": True}))
    assert p.run_configs["n1_cpu"].overrides["extra"] == '{"gamma": 0.97}'


def _bomb(levels=9) -> str:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, levels)]
    return "\n".join(lines) + f"\nrun_configs: {{n1_cpu: {{description: *a{levels - 1}}}}}\n"


def test_an_alias_bomb_is_refused_quickly(tmp_path):
    path = tmp_path / "bomb.yaml"
    path.write_text(_bomb())
    t0 = time.monotonic()
    with pytest.raises(PlanError, match=rf"config file {path}: line \d+: more than 64 YAML aliases"):
        check_config([path], {})
    assert time.monotonic() - t0 < 5
    # the same document already loaded (Snakemake's loader): the value walk stops at its limit
    loaded = yaml.safe_load(_bomb())
    t0 = time.monotonic()
    with pytest.raises(PlanError, match="more than 100000 values"):
        check_config([], loaded)
    with pytest.raises(PlanError, match="more than 100000 values"):
        plan({k: v for k, v in loaded.items() if k == "run_configs"})
    assert time.monotonic() - t0 < 5


@pytest.mark.parametrize("text, message", [
    ("repeats: 2\nrepeats: 3\n", "line 2: duplicate key 'repeats'"),
    ("run_configs:\n  n1: {devices: cpu}\n  n1: {devices: '0'}\n", "line 3: duplicate key 'n1'"),
    ('{"repeats": 2, "repeats": 3}', "duplicate key 'repeats'"),
    ("repeats: [", "not valid YAML"),
    ("a: " + "[" * 200 + "]" * 200, "nested more than 32 deep"),
])
def test_config_files_with_duplicate_keys_or_bad_syntax_are_refused(tmp_path, text, message):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(PlanError, match=f"config file {path}: .*{message.replace('[', '.').replace('{', '.')}"):
        check_config([path], {})


def test_config_files_that_are_not_text_or_not_files_are_refused(tmp_path):
    binary = tmp_path / "b.yaml"
    binary.write_bytes(b"repeats: \xff\xfe\n")
    with pytest.raises(PlanError, match="not UTF-8 text"):
        check_config([binary], {})
    with pytest.raises(PlanError, match="is a directory"):
        check_config([tmp_path], {})
    with pytest.raises(PlanError, match="not a plain file"):
        check_config([Path("/dev/zero")], {})
    big = tmp_path / "big.yaml"
    big.write_text("# " + "x" * config_check.MAX_FILE_BYTES)
    with pytest.raises(PlanError, match="larger than 1024 KB"):
        check_config([big], {})


def test_the_schema_matches_names_in_full_and_bounds_sizes():
    import jsonschema

    validator = jsonschema.Draft202012Validator(SCHEMA)
    for bad in ({"run_set": "a\n"}, {"prefix": "a" * 65}, {"order": ["n1\n"]}, {"repeats": 1001},
                {"run_configs": {"n1": {"env": {"X\n": "1"}}}}, {"run_configs": {"n1": {"cpu_pools": "0-999999"}}},
                {"run_configs": {"n1": {"devices": "0\n"}}}, {"model": {"expect_sha256": "0" * 64 + "\n"}}):
        assert list(validator.iter_errors(bad)), bad
    assert not list(validator.iter_errors({"run_set": "a" * 64, "repeats": 1000}))
