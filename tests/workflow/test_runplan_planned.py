"""`preset: auto` on a CUDA machine with no named preset written for it: the planned
matrix (sacscale plan-matrix) becomes the run configurations; named presets still win
where one fits exactly, and the CPU path never asks the planner."""

from pathlib import Path

import pytest
import yaml

from sacscale.parallel.matrix import plan_matrix
from sacscale.parallel.topology import Gpu, Topology, parse_lscpu, parse_nvidia_topo
from sacscale.pipeline.runplan import (
    Host,
    PlanError,
    resolve,
    run_environment,
    train_command,
)

ROOT = Path(__file__).resolve().parents[2]
PRESETS = yaml.safe_load((ROOT / "workflow" / "presets.yaml").read_text())
FIXTURES = ROOT / "tests" / "parallel" / "fixtures" / "topology"


def matrix_of(name: str, **kw) -> dict:
    topo = Topology(parse_lscpu((FIXTURES / f"{name}.lscpu").read_text()),
                    parse_nvidia_topo((FIXTURES / f"{name}.topo").read_text()))
    return plan_matrix(topo, **kw)


def never():
    raise AssertionError("the planner was asked although a named preset fits")


EIGHT = Host(cuda_devices=8, cpus=frozenset(range(224)))


def test_auto_on_an_eight_gpu_server_runs_the_planned_matrix():
    m = matrix_of("eight_gpu_2x56_smt")
    p = resolve({"preset": "auto"}, PRESETS, EIGHT, matrix=lambda: m)
    assert p.preset == "planned" and p.run_set == "planned"
    assert "no preset in the auto list is written for exactly this many GPUs" in p.preset_reason
    assert m["reason"] in p.preset_reason
    assert p.order == ["n1_local", "n2_pool", "n4_pool", "n8_pool", "n1_total"]
    assert p.run_configs["n2_pool"].cpu_pools == "1-13;57-69" and p.run_configs["n2_pool"].devices == "0,4"
    assert p.run_configs["n8_pool"].world_size == 8 and p.gpus_needed() == 8
    assert p.pairs == [("n1_local", "n2_pool"), ("n1_local", "n4_pool"), ("n1_local", "n8_pool"),
                       ("n1_total", "n8_pool")]
    assert p.probe["devices"] == "0,4" and p.probe["iterations"] == 5
    assert p.as_dict()["matrix"] == m  # recorded in plan.json
    run = next(r for r in p.runs if r.config == "n4_pool")
    args = dict(zip(train_command(p, run, "DIR", "m.mjb")[2::2], train_command(p, run, "DIR", "m.mjb")[3::2]))
    assert args["--devices"] == "0,1,4,5" and args["--collector-cpu-ids"] == "1-13;15-27;57-69;71-83"
    assert args["--num-envs"] == "2048" and args["--batch-size"] == "8192"
    assert run_environment(p, run)["CUDA_DEVICE_ORDER"] == "PCI_BUS_ID"


@pytest.mark.parametrize("host, fixture, expected", [
    (Host(cuda_devices=2, cpus=frozenset(range(160))), "seed_2x40_smt_2gpu", "rtx5090x2"),
    (Host(cuda_devices=2, cpus=frozenset(range(32))), "h200x2", "h200x2"),
    (Host(cuda_devices=1, cpus=frozenset(range(16))), "h200x1", "h200x1"),
])
def test_a_named_preset_for_exactly_this_machine_wins(host, fixture, expected):
    p = resolve({"preset": "auto"}, PRESETS, host, matrix=lambda: matrix_of(fixture))
    assert p.preset == expected
    assert ("written for exactly this many GPUs whose CPU pools exist here and lie on their GPUs' NUMA nodes"
            in p.preset_reason)
    assert "matrix" not in p.as_dict()  # plans of named presets are recorded as before


def test_a_single_rank_pool_over_both_sockets_is_a_control_not_a_misplacement():
    host = Host(cuda_devices=2, cpus=frozenset(range(160)))
    p = resolve({"preset": "auto", "order": ["n1_total64", "n2_pool32"]}, PRESETS, host,
                matrix=lambda: matrix_of("seed_2x40_smt_2gpu"))
    assert p.preset == "rtx5090x2"


def test_presets_with_pools_off_their_gpus_nodes_give_way_to_the_planned_matrix():
    """Two GPUs, one per socket of a 2x56-core server: the seed preset's 48-79 straddles the
    sockets and h200x2 puts GPU 1's pool on socket 0, though all their CPUs exist."""
    cpus = parse_lscpu((FIXTURES / "eight_gpu_2x56_smt.lscpu").read_text())
    m = plan_matrix(Topology(cpus, [Gpu(0, "GPU0", 0, None), Gpu(1, "GPU1", 1, None)]))
    p = resolve({"preset": "auto"}, PRESETS, Host(cuda_devices=2, cpus=frozenset(range(224))), matrix=lambda: m)
    assert p.preset == "planned"
    assert "rtx5090x2: n2_pool32: GPU 1's pool 48-79 has CPUs 48-55 off its NUMA node 1" in p.preset_reason
    assert "h200x2: n1_local: GPU 0's pool" not in p.preset_reason
    assert "h200x2: n2_pool: GPU 1's pool 17-31 has CPUs 17-31 off its NUMA node 1" in p.preset_reason
    assert p.run_configs["n2_pool"].cpu_pools == "1-55;57-111"


def test_without_a_topology_a_named_preset_is_taken_on_its_gpu_count():
    p = resolve({"preset": "auto"}, PRESETS, Host(cuda_devices=2, cpus=frozenset(range(224))))
    assert p.preset == "rtx5090x2" and "NUMA" not in p.preset_reason


def test_without_cuda_the_cpu_preset_and_no_planning():
    p = resolve({"preset": "auto"}, PRESETS, Host(cuda_devices=0, cpus=frozenset(range(2))), matrix=never)
    assert p.preset == "cpu"


def test_four_gpus_and_no_four_gpu_preset_get_the_planned_matrix():
    """h200x2's pools exist on 64 CPUs and it would fit on 2 of the 4 GPUs: the planner comes first."""
    lscpu = "CPU CORE SOCKET NODE\n" + "".join(f"{c} {c} {c // 32} {c // 32}\n" for c in range(64))
    gpus = [Gpu(i, f"GPU{i}", i // 2, None) for i in range(4)]
    m = plan_matrix(Topology(parse_lscpu(lscpu), gpus))
    p = resolve({"preset": "auto"}, PRESETS, Host(cuda_devices=4, cpus=frozenset(range(64))), matrix=lambda: m)
    assert p.preset == "planned" and p.order == ["n1_local", "n2_pool", "n4_pool", "n1_total"]
    assert p.run_configs["n2_pool"].cpu_pools == "1-15;33-47" and p.run_configs["n2_pool"].devices == "0,2"


def test_planner_failure_falls_back_to_a_smaller_preset_and_says_why():
    def broken():
        raise PlanError("planner: sacscale plan-matrix: error: too few cores")

    calls = []

    def counted():
        calls.append(1)
        broken()

    host = Host(cuda_devices=4, cpus=frozenset(range(64)))
    p = resolve({"preset": "auto"}, PRESETS, host, matrix=counted)
    assert p.preset == "h200x2" and len(calls) == 1  # the planner runs once, its failure is kept
    assert "with fewer GPUs" in p.preset_reason and "the topology planner failed (planner: " in p.preset_reason
    p = resolve({"preset": "auto"}, PRESETS, host)  # no planner at all: as before
    assert p.preset == "h200x2"


def test_preset_planned_by_name_on_the_one_h200_machine():
    m = matrix_of("h200x1")
    p = resolve({"preset": "planned"}, PRESETS, Host(cuda_devices=1, cpus=frozenset(range(16))), matrix=m)
    assert p.preset == "planned" and p.order == ["n1_local", "n1_pool7", "n2_shared"]
    assert p.probe["devices"] == "0,0"  # the probe runs the two ranks that share the GPU
    assert p.run_configs["n1_local"].cpu_pools == "1-15"
    assert p.run_configs["n2_shared"].cpu_pools == "1-7;9-15" and p.run_configs["n2_shared"].world_size == 2
    assert p.pairs == [("n1_pool7", "n2_shared")]
    assert p.preset_reason.startswith("named in the config; the matrix planned from the topology: 1 GPU(s)")
    assert [r.name for r in p.runs][:3] == ["plan_r1_n1_local", "plan_r1_n1_pool7", "plan_r1_n2_shared"]


def test_config_keys_still_override_the_planned_matrix():
    m = matrix_of("h200x2")
    p = resolve({"preset": "planned", "order": ["n1_local", "n2_pool"], "iterations": 50,
                 "run_configs": {"n2_pool": {"num_envs": 1024}}},
                PRESETS, Host(cuda_devices=2, cpus=frozenset(range(32))), matrix=m)
    assert p.order == ["n1_local", "n2_pool"] and p.iterations == 50
    assert p.pairs == [("n1_local", "n2_pool")]  # the matrix's pair with n1_total dropped with it
    assert p.run_configs["n2_pool"].num_envs == 1024 and p.run_configs["n2_pool"].cpu_pools == "1-15;17-31"


def test_planned_preset_errors_name_the_problem():
    host = Host(cuda_devices=2, cpus=frozenset(range(32)))
    with pytest.raises(PlanError, match="^preset: planned takes its run configurations from `sacscale plan-matrix`"):
        resolve({"preset": "planned"}, PRESETS, host)
    with pytest.raises(PlanError, match="^planner: the matrix for preset planned has no 'configs'"):
        resolve({"preset": "planned"}, PRESETS, host, matrix={"order": []})
    with pytest.raises(PlanError, match="^planner: matrix configuration 'n1_local' lacks devices"):
        resolve({"preset": "planned"}, PRESETS, host, matrix={"configs": {"n1_local": {}}, "order": ["n1_local"]})
    bad = matrix_of("eight_gpu_2x56_smt")  # planned elsewhere: its CPUs are not on this host
    with pytest.raises(PlanError, match=r"run_configs.n1_local.cpu_pools \(preset planned\): "
                                        r"rank 0 names CPUs 8-13 that do not exist"):
        resolve({"preset": "planned"}, PRESETS, Host(cuda_devices=8, cpus=frozenset(range(8))), matrix=bad)


def test_the_allreduce_placement_controls_run_when_the_order_names_them():
    m = matrix_of("eight_gpu_2x56_smt")
    order = ["n2_pool", "n2_pool_between", "n2_pool_lb", "n2_pool_lb_between"]
    p = resolve({"preset": "auto", "order": order}, PRESETS, EIGHT, matrix=lambda: m)
    assert p.order == order
    assert p.pairs == [("n2_pool", "n2_pool_between"), ("n2_pool_lb", "n2_pool_lb_between")]
    from sacscale.train.options import build_parser

    commands = {r.config: train_command(p, r, "DIR", "m.mjb") for r in p.runs if r.repeat == 1}
    assert sorted(commands) == sorted(order)
    for name, cmd in commands.items():
        args = build_parser().parse_args(cmd[2:])  # what the trainer will run
        assert args.devices == "0,4" and args.collector_cpu_ids == "1-13;57-69"
        assert args.allreduce == ("between-graphs" if name.endswith("_between") else "in-graph")
        assert args.num_envs == (256 if "_lb" in name else 2048)


def test_the_time_to_quality_control_keeps_n1s_updates_per_env_step():
    from sacscale.train.options import build_parser

    m = matrix_of("h200x2")
    host = Host(cuda_devices=3, cpus=frozenset(range(32)))  # no named preset for 3 GPUs: the planned matrix
    p = resolve({"preset": "auto", "order": ["n1_local", "n2_pool_2x"]}, PRESETS, host, matrix=lambda: m)
    assert p.preset == "planned" and ("n1_local", "n2_pool_2x") in p.pairs
    args = {r.config: build_parser().parse_args(train_command(p, r, "DIR", "m.mjb")[2:]) for r in p.runs}
    n1, n2 = args["n1_local"], args["n2_pool_2x"]
    per_env_step = lambda a: a.num_critic_updates / (a.num_envs * len(a.devices.split(",")))  # noqa: E731
    assert per_env_step(n1) == per_env_step(n2) and (n2.num_critic_updates, n2.num_actor_updates) == (16, 4)
