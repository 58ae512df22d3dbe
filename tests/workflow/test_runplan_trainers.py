"""`trainer: unilab` run configurations: the reference trainer through the same plan.
Its command is `sacscale train-reference` with the run configuration's devices, envs,
iterations, seed and pools; its overrides are the reference's Hydra keys; what it cannot
do (train on CPU, simulation threads, phase tracing) is named at planning time."""

from pathlib import Path

import pytest
import yaml

from sacscale.pipeline.runplan import Host, PlanError, resolve, train_command

ROOT = Path(__file__).resolve().parents[2]
PRESETS = yaml.safe_load((ROOT / "workflow" / "presets.yaml").read_text())
H200 = Host(cuda_devices=1, cpus=frozenset(range(16)))


def side_by_side(**ref_fields) -> dict:
    return {"preset": "h200x1", "repeats": 2, "order": ["ref_n1", "ours_n1"], "pairs": [["ref_n1", "ours_n1"]],
            "run_configs": {"ref_n1": {"trainer": "unilab", "devices": "0", "cpu_pools": ["1-15"], "trace": False,
                                       **ref_fields},
                            "ours_n1": {"devices": "0", "cpu_pools": ["1-15"]}}}


def test_the_reference_runs_with_the_same_devices_envs_iterations_seed_and_pool():
    from sacscale.train.options import build_parser
    from sacscale.trainers.reference_options import build_parser as reference_parser

    p = resolve(side_by_side(overrides={"algo.updates_per_step": 8}), PRESETS, H200)
    assert [r.name.removeprefix(p.prefix) for r in p.runs] == ["_r1_ref_n1", "_r1_ours_n1", "_r2_ours_n1",
                                                               "_r2_ref_n1"]  # counterbalanced like any pair
    ref = next(r for r in p.runs if r.config == "ref_n1" and r.repeat == 2)
    ours = next(r for r in p.runs if r.config == "ours_n1" and r.repeat == 2)
    cmd = train_command(p, ref, "DIR", "m.mjb")
    assert cmd[:2] == ["sacscale", "train-reference"]
    a = reference_parser().parse_args(cmd[2:])  # what verify parses it with
    b = build_parser().parse_args(train_command(p, ours, "DIR", "m.mjb")[2:])
    assert (a.devices, a.num_envs, a.iterations, a.seed, a.collector_cpu_ids) == \
        (b.devices, b.num_envs, b.iterations, b.seed, b.collector_cpu_ids) == ("0", 2048, p.iterations, 2, "1-15")
    assert a.override == [f"algo.batch_size={b.batch_size}", "algo.updates_per_step=8"]
    assert p.as_dict()["run_configs"]["ref_n1"]["trainer"] == "unilab"  # recorded in plan.json
    assert p.run_configs["ours_n1"].trainer == "sacscale"


def test_auto_pools_leave_the_reference_its_own_default():
    p = resolve(side_by_side(cpu_pools="auto"), PRESETS, H200)
    a = train_command(p, p.runs[0], "DIR", None)
    assert a[a.index("--collector-cpu-ids") + 1] == ""


@pytest.mark.parametrize("fields, message", [
    ({"devices": "cpu", "cpu_pools": "auto"}, "run_configs.ref_n1.devices: the reference trainer (trainer: unilab) "
                                              "trains on CUDA devices only"),
    ({"trainer": "cleanrl"}, "run_configs.ref_n1.trainer: 'cleanrl' is not one of sacscale, unilab"),
    ({"trace": True}, "run_configs.ref_n1.trace: not a setting of the reference trainer"),
    ({"sim_threads": 4}, "run_configs.ref_n1.sim_threads: not a setting of the reference trainer"),
    ({"overrides": {"gamma": 0.9}}, "run_configs.ref_n1.overrides.gamma: a unilab run's overrides are the "
                                    "reference's Hydra keys"),
    ({"overrides": {"algo.seed": 5}}, "run_configs.ref_n1.overrides.algo.seed: set by the pipeline"),
    ({"overrides": {"algo.num_envs": 5}}, "run_configs.ref_n1.overrides.algo.num_envs: set by the pipeline"),
    ({"overrides": {"algo.gamma": [1, 2]}}, "run_configs.ref_n1.overrides.algo.gamma: give a single value"),
])
def test_what_the_reference_cannot_do_is_named_at_planning_time(fields, message):
    with pytest.raises(PlanError) as err:
        resolve(side_by_side(**fields), PRESETS, H200)
    assert str(err.value).startswith(message), str(err.value)


def test_our_trainer_options_are_not_the_references():
    with pytest.raises(PlanError, match=r"run_configs.ours_n1.overrides.algo.gamma: not an option of `sacscale train`"):
        resolve({**side_by_side(), "run_configs": {**side_by_side()["run_configs"],
                                                   "ours_n1": {"devices": "0", "overrides": {"algo.gamma": 0.9}}}},
                PRESETS, H200)
