"""Planning against what the config asks but the plan would not do.

A one-rank probe (`probe: {devices: cpu}`) of a set whose order holds a two-rank
configuration was planned, and its probe of the data-parallel gradient sync then passed at
world size 1, comparing no all-reduce: refused, naming probe.devices and the configuration.
A probe of two or more ranks, narrower than the widest run (the planned preset's 2-rank
probe of an 8-GPU matrix), plans with a note. `planner.matrix` with a named preset that
never reads it was ignored without a word: refused; under auto (a CPU box with a config
kept for a GPU machine) a note says it is not used."""

from pathlib import Path

import pytest
import yaml

from sacscale.parallel.matrix import plan_matrix
from sacscale.parallel.topology import Topology, parse_lscpu, parse_nvidia_topo
from sacscale.pipeline.runplan import Host, PlanError, plan_notes, resolve

REPO = Path(__file__).resolve().parents[2]
PRESETS = yaml.safe_load((REPO / "workflow" / "presets.yaml").read_text())
FIXTURES = REPO / "tests" / "parallel" / "fixtures" / "topology"
CPU_BOX = Host(cuda_devices=0, cpus=frozenset(range(2)))
ONE_GPU = Host(cuda_devices=1, cpus=frozenset(range(64)))


def test_a_one_rank_probe_of_a_two_rank_set_is_refused():
    with pytest.raises(PlanError, match=r"^probe\.devices: 'cpu' is one rank, and run configuration n2_cpu trains 2 "
                                        r"\(devices 'cpu,cpu'\): a one-rank probe compares no gradient all-reduce"):
        resolve({"preset": "cpu", "probe": {"devices": "cpu", "compile_loss": True}}, PRESETS, CPU_BOX)


def test_a_presets_one_rank_probe_is_named_as_the_presets():
    """h200x1_learning's two-rank controls, ordered without the probe its comment asks for."""
    with pytest.raises(PlanError, match=r"^probe\.devices \(preset h200x1_learning\): '0' is one rank, and run "
                                        r"configuration n2_shared_lowent trains 2 .* e\.g\. '0,0'$"):
        resolve({"preset": "h200x1_learning", "order": ["n1_ref", "n2_shared_lowent"]}, PRESETS, ONE_GPU)
    plan = resolve({"preset": "h200x1_learning", "order": ["n1_ref", "n2_shared_lowent"],
                    "probe": {"devices": "0,0"}}, PRESETS, ONE_GPU)
    assert plan.probe["devices"] == "0,0" and plan_notes({}, plan) == []


def test_a_one_rank_probe_of_one_rank_runs_plans():
    plan = resolve({"preset": "cpu", "order": ["n1_cpu"], "probe": {"devices": "cpu"}}, PRESETS, CPU_BOX)
    assert plan.order == ["n1_cpu"] and plan_notes({}, plan) == []


def test_only_our_trainers_ranks_count():
    """The reference trainer syncs its ranks by its own code, which the probe does not drive."""
    host = Host(cuda_devices=2, cpus=frozenset(range(64)))
    plan = resolve({"preset": "h200x2_ref", "order": ["ref_n2"], "pairs": [], "probe": {"devices": "0"},
                    "reference": {"python": "/bin/true"}}, PRESETS, host, check_host=False)
    assert plan.probe["devices"] == "0"


def test_every_preset_probes_as_wide_as_its_runs():
    for name in PRESETS["presets"]:
        if name == PRESETS["auto"]["planned"]:
            continue
        plan = resolve({"preset": name}, PRESETS, Host(cuda_devices=2, cpus=frozenset(range(256))), check_host=False)
        assert not plan_notes({"preset": name}, plan), name


def test_a_narrower_multi_rank_probe_plans_with_a_note():
    """The planned preset probes its first 2-rank configuration, by design, on any GPU count."""
    fixture = FIXTURES / "eight_gpu_2x56_smt"
    topology = Topology(parse_lscpu(fixture.with_suffix(".lscpu").read_text()),
                        parse_nvidia_topo(fixture.with_suffix(".topo").read_text()))
    matrix = plan_matrix(topology)
    eight_gpus = Host(cuda_devices=8, cpus=frozenset(range(224)))
    plan = resolve({"preset": "auto"}, PRESETS, eight_gpus, matrix=lambda: matrix)
    assert plan.preset == "planned"
    assert plan_notes({}, plan) == [
        "probe.devices '0,4' tests the gradient sync over 2 ranks and n8_pool trains 8: the probe passes for 2 ranks "
        "only (the report says so); give probe.devices 8 ranks to probe the widest run"]


def test_a_matrix_with_a_named_preset_that_never_reads_it_is_refused(tmp_path):
    with pytest.raises(PlanError, match=r"^planner\.matrix: given, but preset cpu \(named in the config\) takes its "
                                        r"run configurations from workflow/presets\.yaml and never reads a matrix; "
                                        r"leave planner\.matrix out, or name preset: planned to plan from it$"):
        resolve({"preset": "cpu", "planner": {"matrix": str(tmp_path / "m.json")}}, PRESETS, CPU_BOX)


def test_a_matrix_under_auto_on_a_cpu_box_plans_with_a_note(tmp_path):
    config = {"preset": "auto", "planner": {"matrix": "m.json"}}
    plan = resolve(config, PRESETS, CPU_BOX)
    assert plan.preset == "cpu"
    assert plan_notes(config, plan) == [
        "planner.matrix m.json: its run configurations are not used: preset auto chose cpu, which has its own; "
        "only preset planned takes a matrix's"]


def test_auto_with_a_matrix_still_takes_a_named_gpu_preset():
    """auto's candidates are planned without the matrix, so the refusal does not strike them."""
    config = {"preset": "auto", "planner": {"matrix": "m.json"}}
    plan = resolve(config, PRESETS, Host(cuda_devices=2, cpus=frozenset(range(32))))
    assert plan.preset == "h200x2" and len(plan_notes(config, plan)) == 1


def test_ranks_with_the_sync_off_have_none_to_probe():
    config = {"preset": "h200x1", "order": ["x"], "pairs": [],
              "run_configs": {"x": {"devices": "0,0", "cpu_pools": ["1-7", "9-15"], "overrides": {"grad-sync": "off"}}}}
    plan = resolve(config, PRESETS, Host(cuda_devices=1, cpus=frozenset(range(16))))
    assert plan.probe["devices"] == "0" and plan_notes(config, plan) == []


@pytest.mark.parametrize("preset", ["cpu", "planned", "auto"])
def test_an_empty_matrix_path_is_refused_naming_it(preset):
    with pytest.raises(PlanError, match=r"^planner\.matrix: '' is an empty path; give the file `sacscale plan-matrix "
                                        r"--output FILE` wrote, or leave planner\.matrix out$"):
        resolve({"preset": preset, "planner": {"matrix": ""}}, PRESETS, CPU_BOX)


def test_planner_settings_with_a_named_preset_that_never_plans_are_refused():
    with pytest.raises(PlanError, match=r"^planner\.smt, planner\.pool_cores: given, but preset cpu \(named in the "
                                        r"config\) takes its run configurations from workflow/presets\.yaml and never "
                                        r"plans; leave planner\.smt, planner\.pool_cores out, or name preset: planned "
                                        r"to plan with them$"):
        resolve({"preset": "cpu", "planner": {"smt": True, "pool_cores": 3}}, PRESETS, CPU_BOX)
    with pytest.raises(PlanError, match=r"^planner\.pool_cores: given, .* to plan with it$"):
        resolve({"preset": "cpu", "planner": {"pool_cores": 3}}, PRESETS, CPU_BOX)
    plan = resolve({"preset": "cpu", "planner": {"smt": False, "pool_cores": None}}, PRESETS, CPU_BOX)
    assert plan.preset == "cpu"


def test_planner_settings_under_auto_on_a_cpu_box_plan_with_a_note():
    config = {"preset": "auto", "planner": {"smt": True, "pool_cores": 3}}
    plan = resolve(config, PRESETS, CPU_BOX)
    assert plan.preset == "cpu"
    assert plan_notes(config, plan) == [
        "planner.smt true, planner.pool_cores 3: not used: preset auto chose cpu, which has its own run "
        "configurations; only preset planned runs the planner"]


def test_auto_refuses_a_probe_too_narrow_for_the_preset_that_fits():
    """A one-rank probe under auto on a two-GPU machine: the two-GPU preset fits, so the probe
    is refused naming it, not taken as a reason to choose the one-GPU preset."""
    config = {"preset": "auto", "probe": {"devices": "0"}}
    with pytest.raises(PlanError, match=r"probe\.devices: '0' is one rank, and run configuration n2_pool trains 2"):
        resolve(config, PRESETS, Host(cuda_devices=2, cpus=frozenset(range(32))))
