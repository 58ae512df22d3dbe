"""Two configurations of a set that resolve to the same training. Both configurations of a
repeat train on the repeat's seed (paired repeats) and the CPU trainer is deterministic, so
`run_configs: {n2_cpu: {devices: cpu, cpu_pools: auto}}` over the CPU preset (n2_cpu then
the one-rank run n1_cpu is) planned, trained every run, and only then did the set's own
verify call one run a copy of the other (exit 1 after minutes). Planning now refuses such a
plan, naming both configurations and a key to set apart; the shipped presets still plan,
with every configuration they write in the order."""

from pathlib import Path

import pytest
import yaml

from sacscale.parallel.matrix import plan_matrix
from sacscale.parallel.topology import Topology, parse_lscpu, parse_nvidia_topo
from sacscale.pipeline.runplan import Host, PlanError, resolve
from pipeline_helpers import copy_workflow, probe_as_wide, snakemake

REPO = Path(__file__).resolve().parents[2]
PRESETS = yaml.safe_load((REPO / "workflow" / "presets.yaml").read_text())
TOPOLOGIES = REPO / "tests" / "parallel" / "fixtures" / "topology"
CPU_BOX = Host(cuda_devices=0, cpus=frozenset(range(2)))
BIG_BOX = Host(cuda_devices=8, cpus=frozenset(range(256)))
TWIN = {"preset": "cpu", "run_set": "twin", "iterations": 20, "repeats": 1,
        "run_configs": {"n2_cpu": {"devices": "cpu", "cpu_pools": "auto", "description": "one rank again"}}}
TWIN_LINE = ("run_configs.n2_cpu: trains exactly as run_configs.n1_cpu (preset cpu) does (trainer sacscale, "
             "devices 'cpu', cpu_pools auto and every other training setting alike; they differ only in "
             "description), and both configurations of a repeat train on its one seed (paired repeats, on purpose")


def test_a_configuration_made_the_same_training_as_another_is_refused():
    with pytest.raises(PlanError) as caught:
        resolve(TWIN, PRESETS, CPU_BOX)
    message = str(caught.value)
    assert message.startswith(TWIN_LINE), message
    assert message.endswith("give run_configs.n2_cpu.devices another value, or take n2_cpu out of order")
    assert "\n" not in message


def test_the_run_wrappers_time_limit_does_not_set_two_trainings_apart():
    config = {"preset": "cpu", "run_configs": {"n1_long": {"devices": "cpu", "timeout_s": 900}},
              "order": ["n1_cpu", "n1_long"]}
    with pytest.raises(PlanError, match=r"^run_configs\.n1_long: trains exactly as run_configs\.n1_cpu \(preset "
                                        r"cpu\) does .*; they differ only in description and timeout_s\)"):
        resolve(config, PRESETS, CPU_BOX)


def test_the_key_named_is_one_the_config_gives():
    """The later configuration's own training key where the config gives one, else the earlier's."""
    config = {"preset": "cpu", "order": ["n1_cpu", "n1_copy"],
              "run_configs": {"n1_cpu": {"num_envs": 8}, "n1_copy": {"devices": "cpu", "num_envs": 8}}}
    with pytest.raises(PlanError, match=r"give run_configs\.n1_copy\.devices another value, or take n1_copy "):
        resolve(config, PRESETS, CPU_BOX)
    config = {"preset": "cpu", "order": ["n1_copy", "n1_cpu"], "run_configs": {"n1_copy": {"devices": "cpu"}}}
    with pytest.raises(PlanError, match=r"^run_configs\.n1_cpu \(preset cpu\): trains exactly as run_configs\."
                                        r"n1_copy does .* give run_configs\.n1_copy\.devices another value, or take "
                                        r"n1_cpu out of order$"):
        resolve(config, PRESETS, CPU_BOX)


def test_an_override_written_as_a_string_gives_the_same_command_line_as_a_twin():
    """The preset's `replay-per-env: 64` written as a string: the trainer gets
    `--replay-per-env 64` either way, so the two train alike."""
    config = {**TWIN, "run_configs": {"n2_cpu": {**TWIN["run_configs"]["n2_cpu"],
                                                 "overrides": {"replay-per-env": "64"}}}}
    with pytest.raises(PlanError) as caught:
        resolve(config, PRESETS, CPU_BOX)
    assert str(caught.value).startswith(TWIN_LINE), caught.value


def test_overrides_given_in_another_order_or_type_are_twins():
    config = {"preset": "cpu", "order": ["a", "b"], "run_configs": {
        "a": {"devices": "cpu", "overrides": {"checkpoint-every": 5, "replay-per-env": 64}},
        "b": {"devices": "cpu", "overrides": {"replay-per-env": 64, "checkpoint-every": "5"}}}}
    with pytest.raises(PlanError, match=r"^run_configs\.b: trains exactly as run_configs\.a does .*"
                                        r"give run_configs\.b\.devices another value, or take b out of order$"):
        resolve(config, PRESETS, CPU_BOX)


@pytest.mark.parametrize("apart", [{"num_envs": 8}, {"overrides": {"replay-per-env": 32}}, {"trace": True},
                                   {"env": {"OMP_NUM_THREADS": "1"}}])
def test_configurations_one_training_setting_apart_plan(apart):
    config = {**TWIN, "run_configs": {"n2_cpu": {**TWIN["run_configs"]["n2_cpu"], **apart}}}
    plan = resolve(config, PRESETS, CPU_BOX)
    assert plan.order == ["n1_cpu", "n2_cpu"]


def test_a_twin_left_out_of_order_is_not_refused():
    """It is never run, so nothing is compared with it."""
    config = {"preset": "cpu", "run_configs": {"n1_again": {"devices": "cpu", "description": "d"}}}
    assert resolve(config, PRESETS, CPU_BOX).order == ["n1_cpu", "n2_cpu"]


def _topology(name: str) -> Topology:
    return Topology(parse_lscpu((TOPOLOGIES / f"{name}.lscpu").read_text()),
                    parse_nvidia_topo((TOPOLOGIES / f"{name}.topo").read_text()))


NAMED = sorted(set(PRESETS["presets"]) - {PRESETS["auto"]["planned"]})
TOPOLOGY_NAMES = sorted(p.stem for p in TOPOLOGIES.glob("*.lscpu"))


@pytest.mark.parametrize("name", NAMED)
def test_every_shipped_preset_plans_with_every_configuration_it_writes(name):
    written = list(PRESETS["presets"][name]["run_configs"])
    for config in ({"preset": name}, {"preset": name, "order": written, **probe_as_wide(PRESETS, name)}):
        plan = resolve(config, PRESETS, BIG_BOX)
        assert plan.order == config.get("order", PRESETS["presets"][name]["order"])


@pytest.mark.parametrize("topology", TOPOLOGY_NAMES)
def test_the_planned_preset_plans_with_every_configuration_of_its_matrix(topology):
    matrix = plan_matrix(_topology(topology))
    planned = PRESETS["auto"]["planned"]
    for order in (None, list(matrix["configs"])):
        config = {"preset": planned, **({"order": order} if order else {})}
        plan = resolve(config, PRESETS, BIG_BOX, matrix=matrix)
        assert plan.order == (order or matrix["order"])


def test_the_pipeline_refuses_the_twin_before_any_job(tmp_path):
    workdir = copy_workflow(tmp_path / "wf")
    (workdir / "twin.yaml").write_text(yaml.safe_dump(TWIN))
    done = snakemake(workdir, "-n", "--cores", "1", "--configfile", "twin.yaml", timeout=300)
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert f"config error: {TWIN_LINE}" in out, out
    assert not (workdir / "results" / "twin").exists()
