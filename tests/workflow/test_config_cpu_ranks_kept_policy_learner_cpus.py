"""Settings that were planned although the plan could not do what they say: a recorded
matrix's learner CPUs not on this machine, more CPU ranks (of a run configuration or of the
probe) than this machine has CPUs (64 gloo ranks on 2 CPUs was planned), and
`keep_policies: best` without the evaluations that choose the best (every policy then stayed
without a word)."""

import copy
import json
from pathlib import Path

import pytest
import yaml

from sacscale.cpus import available_cpus, format_cpu_list
from sacscale.parallel.matrix import plan_matrix
from sacscale.parallel.topology import Topology, parse_lscpu, parse_nvidia_topo
from sacscale.pipeline.environment import check_plan
from sacscale.pipeline.runplan import Host, PlanError, resolve

ROOT = Path(__file__).resolve().parents[2]
PRESETS = yaml.safe_load((ROOT / "workflow" / "presets.yaml").read_text())
FIXTURES = ROOT / "tests" / "parallel" / "fixtures" / "topology"
CPU_BOX = Host(cuda_devices=0, cpus=frozenset(range(2)))
H200X2 = Host(cuda_devices=2, cpus=frozenset(range(32)))
SIXTY_FOUR = ",".join(["cpu"] * 64)


def h200x2_matrix() -> dict:
    topo = Topology(parse_lscpu((FIXTURES / "h200x2.lscpu").read_text()),
                    parse_nvidia_topo((FIXTURES / "h200x2.topo").read_text()))
    return plan_matrix(topo)


def with_learners(matrix: dict, name: str, learners: list[str]) -> dict:
    changed = copy.deepcopy(matrix)
    changed["configs"][name]["learner_cpus"] = learners
    return changed


def test_learner_cpus_this_machine_lacks_are_named_with_host_checks():
    matrix = h200x2_matrix()
    pools = matrix["configs"]["n2_pool"]["cpu_pools"]
    assert "300" not in json.dumps(pools)
    bad = with_learners(matrix, "n2_pool", [matrix["configs"]["n2_pool"]["learner_cpus"][0], "300"])
    with pytest.raises(PlanError) as refused:
        resolve({"preset": "planned"}, PRESETS, H200X2, matrix=bad)
    assert str(refused.value) == (
        "planner: configs.n2_pool.learner_cpus: rank 1 names CPUs 300 that do not exist on this machine (CPUs "
        "available to this process: 0-31); correct the file or record it again (`sacscale plan-matrix --output "
        "FILE`)")


def test_learner_cpus_of_a_configuration_left_out_of_the_order_are_not_judged_against_this_machine():
    bad = with_learners(h200x2_matrix(), "n2_pool", ["0", "300"])
    resolve({"preset": "planned", "order": ["n1_local"]}, PRESETS, H200X2, matrix=bad)


def test_learner_cpus_of_another_machine_pass_without_host_checks():
    bad = with_learners(h200x2_matrix(), "n2_pool", ["0", "300"])
    resolve({"preset": "planned", "planner": {"matrix": "m.json"}}, PRESETS, H200X2, check_host=False, matrix=bad)


def test_learner_cpus_in_a_pool_are_named_at_planning():
    matrix = h200x2_matrix()
    inside = matrix["configs"]["n2_pool"]["cpu_pools"][0].split("-")[0]
    with pytest.raises(PlanError, match=rf"^planner: configs\.n2_pool\.learner_cpus: rank 0's learner CPUs {inside} "
                                        r"are in a collector pool \(cpu_pools\)"):
        resolve({"preset": "planned"}, PRESETS, H200X2, matrix=with_learners(matrix, "n2_pool", [inside, inside]))


def test_more_cpu_ranks_than_cpus_are_named():
    config = {"preset": "cpu", "run_configs": {"n2_cpu": {"devices": SIXTY_FOUR, "cpu_pools": "auto"}}}
    with pytest.raises(PlanError) as refused:
        resolve(config, PRESETS, CPU_BOX)
    assert str(refused.value) == (
        "run_configs.n2_cpu.devices: 64 CPU ranks for the 2 CPU(s) of this machine (CPUs available to this "
        "process: 0-1); each rank needs a CPU of its own: give at most 2")


def test_more_probe_ranks_than_cpus_are_named():
    with pytest.raises(PlanError) as refused:
        resolve({"preset": "cpu", "probe": {"devices": SIXTY_FOUR}}, PRESETS, CPU_BOX)
    assert str(refused.value).startswith("probe.devices: 64 CPU ranks for the 2 CPU(s) of this machine")


def test_a_third_rank_on_two_cpus_is_named_and_two_pass():
    with pytest.raises(PlanError, match=r"^probe\.devices: 3 CPU ranks for the 2 CPU\(s\)"):
        resolve({"preset": "cpu", "probe": {"devices": "cpu,cpu,cpu"}}, PRESETS, CPU_BOX)
    assert resolve({"preset": "cpu"}, PRESETS, CPU_BOX).run_configs["n2_cpu"].world_size == 2


def test_cpu_ranks_for_another_machine_pass_without_host_checks():
    config = {"preset": "cpu", "probe": {"devices": SIXTY_FOUR},
              "run_configs": {"n2_cpu": {"devices": SIXTY_FOUR, "cpu_pools": "auto"}}}
    plan = resolve(config, PRESETS, CPU_BOX, check_host=False)
    assert plan.run_configs["n2_cpu"].world_size == 64


def test_keep_policies_best_without_evaluations_is_named():
    with pytest.raises(PlanError) as refused:
        resolve({"preset": "cpu", "evaluation": {"enabled": False}, "keep_policies": "best"}, PRESETS, CPU_BOX)
    assert str(refused.value) == (
        "keep_policies: best needs evaluation.enabled, which is false: best keeps the best-evaluated run's policy; "
        "enable the evaluation, or set keep_policies to all (without evaluations every run's policy is kept)")


def test_a_preset_s_keep_policies_best_without_evaluations_names_the_preset():
    presets = copy.deepcopy(PRESETS)
    presets["presets"]["cpu"]["keep_policies"] = "best"
    with pytest.raises(PlanError, match=r"^keep_policies \(preset cpu\): best needs evaluation\.enabled"):
        resolve({"preset": "cpu", "evaluation": {"enabled": False}}, presets, CPU_BOX)


@pytest.mark.parametrize("config", [
    {"evaluation": {"enabled": False}},  # left out: every policy stays without evaluations
    {"evaluation": {"enabled": False}, "keep_policies": "all"},
    {"evaluation": {"enabled": True}, "keep_policies": "best"},
], ids=["left_out", "all", "with_evaluations"])
def test_keep_policies_that_the_evaluations_allow_pass(config):
    resolve({"preset": "cpu", **config}, PRESETS, CPU_BOX)


def test_verify_env_names_more_cpu_ranks_than_cpus_where_the_runs_execute():
    """Planned for another machine (no host checks), the ranks are judged where the runs run."""
    cpus = available_cpus()

    def problems(ranks: int) -> list[str]:
        devices = ",".join(["cpu"] * ranks)
        config = {"preset": "cpu", "run_configs": {"n2_cpu": {"devices": devices, "cpu_pools": "auto"}}}
        plan = resolve(config, PRESETS, CPU_BOX, check_host=False).as_dict()
        return [p for p in check_plan(plan, {"torch": {"cuda_devices": 0}}) if "CPU ranks" in p]

    devices = ",".join(["cpu"] * (len(cpus) + 1))
    assert problems(len(cpus) + 1) == [
        f"run_configs.n2_cpu.devices ({devices}): {len(cpus) + 1} CPU ranks for the {len(cpus)} CPU(s) here (CPUs "
        f"available to this process: {format_cpu_list(cpus)}); each rank needs a CPU of its own"]
    assert problems(len(cpus)) == []
