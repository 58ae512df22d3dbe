"""A user's `overrides` and `env` (in run_defaults, or in a run configuration the preset names)
merged key by key into the preset's, as config.yaml and docs/config.md say: one added option or
variable replaced the preset's whole mapping, so a learning set trained without the observation
normalisation and entropy target its description claimed, and NCCL's multicast came back on."""

import json
from pathlib import Path

import pytest
import yaml

from sacscale.pipeline.runplan import Host, PlanError, resolve

ROOT = Path(__file__).resolve().parents[2]
PRESETS = yaml.safe_load((ROOT / "workflow" / "presets.yaml").read_text())
GPU_BOX = Host(cuda_devices=2, cpus=frozenset(range(32)))
CPU_BOX = Host(cuda_devices=0, cpus=frozenset(range(2)))


def gpu_plan(**config):
    return resolve(config, PRESETS, GPU_BOX, check_host=False)


def cpu_plan(**config):
    return resolve({"preset": "cpu", "order": ["n1_cpu"], "repeats": 1, **config}, PRESETS, CPU_BOX)


def test_an_added_option_keeps_the_presets_options():
    plan = gpu_plan(preset="h200x1_learning", order=["n1_obsnorm_lowent"],
                    run_configs={"n1_obsnorm_lowent": {"overrides": {"checkpoint-every": 250}}})
    assert plan.run_configs["n1_obsnorm_lowent"].overrides == {
        "obs_norm": True, "extra": '{"target_entropy": -14.5}', "checkpoint-every": 250}


@pytest.mark.parametrize("preset", ["h200x1", "h200x2"])
def test_an_added_variable_keeps_the_presets_variables(preset):
    plan = gpu_plan(preset=preset, run_defaults={"env": {"NCCL_DEBUG": "INFO"}})
    preset_env = PRESETS["presets"][preset]["run_defaults"]["env"]
    for rc in plan.run_configs.values():
        assert rc.env == {**preset_env, "NCCL_DEBUG": "INFO"}


def test_an_option_in_run_defaults_keeps_the_presets_and_one_spelling_replaces_the_other():
    assert cpu_plan(run_defaults={"overrides": {"min-free-mb": 500}}).run_configs["n1_cpu"].overrides == {
        "replay-per-env": 64, "min-free-mb": 500}
    # the preset's replay-per-env, given again as replay_per_env, is one option, not two
    assert cpu_plan(run_defaults={"overrides": {"replay_per_env": 32}}).run_configs["n1_cpu"].overrides == {
        "replay_per_env": 32}
    assert cpu_plan(run_configs={"n1_cpu": {"overrides": {"replay_per_env": 32}}}).run_configs["n1_cpu"].overrides \
        == {"replay_per_env": 32}


def test_an_added_option_keeps_a_shared_gpus_sync_setting():
    """Refused before, with advice to add the setting the preset had and the merge dropped."""
    plan = gpu_plan(preset="h200x1_shared", order=["n2_shared"], pairs=[],
                    run_configs={"n2_shared": {"overrides": {"checkpoint-every": 250}}})
    assert plan.run_configs["n2_shared"].overrides["allreduce"] == "between-graphs"


def test_null_removes_a_presets_key():
    plan = gpu_plan(preset="h200x1", run_defaults={"env": {"NCCL_NVLS_ENABLE": None, "NCCL_DEBUG": "INFO"}})
    assert {rc.env["NCCL_DEBUG"] for rc in plan.run_configs.values()} == {"INFO"}
    assert not any("NCCL_NVLS_ENABLE" in rc.env for rc in plan.run_configs.values())
    # an entry's null removes run_defaults' key too, whichever spelling
    plan = cpu_plan(run_configs={"n1_cpu": {"overrides": {"replay_per_env": None}}})
    assert plan.run_configs["n1_cpu"].overrides == {}


def test_extra_is_merged_by_its_settings():
    plan = gpu_plan(preset="h200x1_learning", order=["n1_obsnorm_lowent"],
                    run_configs={"n1_obsnorm_lowent": {"overrides": {"extra": '{"tau": 0.01}'}}})
    overrides = plan.run_configs["n1_obsnorm_lowent"].overrides
    assert overrides["obs_norm"] is True
    assert json.loads(overrides["extra"]) == {"target_entropy": -14.5, "tau": 0.01}


def test_a_presets_key_is_named_as_the_presets_beside_the_users():
    """The preset's option of a configuration the user also gives was credited to the user's
    run_configs entry, a key the user never wrote."""
    with pytest.raises(PlanError) as err:
        gpu_plan(preset="h200x1_learning", order=["n1_obsnorm_lowent"],
                 run_configs={"n1_obsnorm_lowent": {"trainer": "unilab", "overrides": {"algo.gamma": 0.99}}})
    assert str(err.value).startswith("run_configs.n1_obsnorm_lowent.overrides.obs_norm (preset h200x1_learning): "
                                     "a unilab run's overrides are the reference's Hydra keys"), err.value


@pytest.mark.parametrize(("layers", "named"), [
    ({"run_defaults": {"overrides": {"extra": '{"tau": 0.01}'}},
      "run_configs": {"n1_cpu": {"overrides": {"extra": '{"gamma": 0.9, "gamma": 0.5}'}}}},
     "run_configs.n1_cpu.overrides.extra: argument --extra: not valid JSON (the key 'gamma' is given twice"),
    ({"run_defaults": {"overrides": {"extra": '{"tau": 0.01, "tau": 0.02}'}},
      "run_configs": {"n1_cpu": {"overrides": {"extra": '{"gamma": 0.9}'}}}},
     "run_defaults.overrides.extra: argument --extra: not valid JSON (the key 'tau' is given twice"),
    ({"run_defaults": {"overrides": {"extra": '[1]'}},
      "run_configs": {"n1_cpu": {"overrides": {"extra": '{"gamma": 0.9}'}}}},
     "run_defaults.overrides.extra: --extra must be a JSON object, got list"),
], ids=["twice in the entry", "twice in run_defaults", "no object in run_defaults"])
def test_an_extra_that_cannot_be_merged_is_named_in_its_own_layer(layers, named):
    # merging read each layer with the last value of a key given twice, and dropped a layer that
    # was no JSON object: the merged extra passed the checks that refuse either alone
    with pytest.raises(PlanError) as err:
        cpu_plan(**layers)
    assert str(err.value).startswith(named), err.value


def test_a_negated_option_in_a_later_layer_replaces_the_option():
    plan = cpu_plan(run_defaults={"overrides": {"obs_norm": True}},
                    run_configs={"n1_cpu": {"overrides": {"no-obs-norm": True}}})
    assert plan.run_configs["n1_cpu"].overrides == {"replay-per-env": 64, "no-obs-norm": True}
