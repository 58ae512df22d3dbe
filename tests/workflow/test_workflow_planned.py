"""The workflow's hook to the planner: `preset: planned` (what `auto` picks on a CUDA
machine no named preset fits exactly) plans from `sacscale plan-matrix` output."""

import json
import os

import pytest
import yaml
from pipeline_helpers import REPO, snakemake

from sacscale.cli import main
from sacscale.pipeline.plan_values import matrix_named
from sacscale.pipeline.runplan import Host, PlanError, resolve

FIXTURES = REPO / "tests" / "parallel" / "fixtures" / "topology"


def test_dry_run_plans_the_recorded_matrix(workflow_dir):
    matrix = workflow_dir / "matrix.json"
    assert main(["plan-matrix", "--lscpu", str(FIXTURES / "eight_gpu_2x56_smt.lscpu"),
                 "--nvidia-smi-topo", str(FIXTURES / "eight_gpu_2x56_smt.topo"), "--output", str(matrix)]) == 0
    (workflow_dir / "planned.yaml").write_text(yaml.safe_dump(
        {"preset": "planned", "host_checks": False, "repeats": 1, "planner": {"matrix": "matrix.json"}}))
    proc = snakemake(workflow_dir, "-n", "--cores", "1", "--configfile", "planned.yaml")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "sacscale: preset planned (named in the config; the matrix planned from the topology: 8 GPU(s)" in out
    assert "5 runs of n1_local, n2_pool, n4_pool, n8_pool, n1_total" in out
    assert json.loads(matrix.read_text())["configs"]["n4_pool"]["devices"] == "0,1,4,5"


def test_planning_on_a_machine_without_gpus_fails_naming_it(workflow_dir):
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}  # no GPU, whatever the machine has
    proc = snakemake(workflow_dir, "-n", "--cores", "1", "--config", "preset=planned", env=env)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "config error: planner: sacscale plan-matrix: error: no GPU" in out, out
    assert not (workflow_dir / "results").exists()


def recorded_matrix(workflow_dir, edit=None, mode=0o644):
    """planned.yaml naming matrix.json, recorded from a fixture (changed by `edit`)."""
    matrix = workflow_dir / "matrix.json"
    assert main(["plan-matrix", "--lscpu", str(FIXTURES / "eight_gpu_2x56_smt.lscpu"),
                 "--nvidia-smi-topo", str(FIXTURES / "eight_gpu_2x56_smt.topo"), "--output", str(matrix)]) == 0
    if edit:
        data = json.loads(matrix.read_text())
        edit(data)
        matrix.write_text(json.dumps(data))
    matrix.chmod(mode)
    (workflow_dir / "planned.yaml").write_text(yaml.safe_dump(
        {"preset": "planned", "host_checks": False, "repeats": 1, "planner": {"matrix": "matrix.json"}}))
    return matrix


TAKEN_AS = "its run configurations (num_envs, overrides, devices, pools) are planned as this user's own"


def _refused(workflow_dir, says):
    proc = snakemake(workflow_dir, "-n", "--cores", "1", "--configfile", "planned.yaml")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert says in out, out
    assert "sacscale: preset" not in out and "Traceback" not in out
    assert not (workflow_dir / "results").exists()


def test_a_recorded_matrix_others_may_write_is_refused(workflow_dir):
    recorded_matrix(workflow_dir, mode=0o666)
    _refused(workflow_dir, "config error: planner.matrix: recorded matrix matrix.json: is writable by other users "
                           f"(mode 0666); {TAKEN_AS}: use a copy of your own, closed to others (chmod go-w)")


@pytest.mark.skipif(os.getuid() != 0, reason="giving a file to another user needs root")
def test_a_recorded_matrix_of_another_user_is_refused(workflow_dir):
    matrix = recorded_matrix(workflow_dir, lambda m: m["configs"]["n1_local"].update(num_envs=3))
    os.chown(matrix, 65534, 65534)
    _refused(workflow_dir, "config error: planner.matrix: recorded matrix matrix.json: belongs to uid 65534, another "
                           f"user; {TAKEN_AS}: use a copy of your own")


def test_an_error_in_a_recorded_matrix_value_names_the_file(workflow_dir):
    recorded_matrix(workflow_dir, lambda m: m["configs"]["n1_local"].update(overrides={"log-every": 999}))
    _refused(workflow_dir, "config error: run_configs.n1_local.overrides.log-every (preset planned, from "
                           "planner.matrix matrix.json): ")


def test_a_recorded_matrix_of_the_wrong_shape_is_named(workflow_dir):
    recorded_matrix(workflow_dir, lambda m: m["configs"]["n1_local"].pop("devices"))
    _refused(workflow_dir, "config error: planner.matrix matrix.json: matrix configuration 'n1_local' lacks "
                           "devices or cpu_pools")


@pytest.mark.parametrize(("edit", "says"), [
    (lambda m: m["configs"]["n4_pool"].update(cpu_pools=7),
     "configs.n4_pool.cpu_pools: 7 is not a CPU list per rank ([\"0-3\", \"4-7\"]) or the lists joined by ';'"),
    (lambda m: m["configs"]["n4_pool"].update(overrides=5),
     "configs.n4_pool.overrides: 5 is not a mapping of trainer options to strings, numbers or booleans"),
    (lambda m: m["configs"]["n4_pool"].update(num_envs="16"), "configs.n4_pool.num_envs: \"16\" is not a whole number"),
    (lambda m: m["pairs"].append(5), "pairs[7]: 5 is not a pair [baseline, compared] of run configuration names"),
    (lambda m: m["order"].append(["n1_local"]), "order[5]: [\"n1_local\"] is not a run configuration's name"),
    (lambda m: m.update(nodes=5),
     "nodes: 5 is not a mapping of NUMA node numbers (\"0\") to CPU lists (\"0-55,112-167\")"),
    (lambda m: m["gpus"][0].update(node="x"), "gpus[0].node: \"x\" is not a NUMA node's number from 0 to 1023"),
    (lambda m: m["configs"]["n1_local"].update(learner_cpus=[0]),
     "configs.n1_local.learner_cpus: [0] is not a CPU list per rank ([\"0-3\", \"4-7\"]) or the lists joined by ';'"),
    (lambda m: m["gpus"].append(dict(m["gpus"][0])),
     "gpus[8].index: GPU 0 is listed twice (gpus[0] too), each GPU once"),
    (lambda m: m["configs"]["n2_pool"].update(learner_cpus=["1", "1"]),  # both learners in rank 0's pool 1-13
     "configs.n2_pool.learner_cpus: rank 0's learner CPUs 1 are in a collector pool (cpu_pools)"),
    (lambda m: m["configs"]["n2_pool"].update(devices="0,9"),  # its pool's node was not judged, and it was planned
     "configs.n2_pool.devices: GPU 9 is not in the matrix's gpus (it lists GPUs 0-7), so its pool's NUMA node "
     "cannot be judged"),
], ids=["cpu_pools", "overrides", "num_envs", "pair", "order", "nodes", "gpu_node", "learner_cpus", "gpu_twice",
        "learner_cpus_in_a_pool", "device_off_gpus"])
def test_a_recorded_matrix_field_of_the_wrong_type_is_named(workflow_dir, edit, says):
    recorded_matrix(workflow_dir, edit)
    _refused(workflow_dir, f"config error: planner.matrix matrix.json: {says}; correct the file or record it again "
                           "(`sacscale plan-matrix --output FILE`)")


PRESETS = yaml.safe_load((REPO / "workflow" / "presets.yaml").read_text())
ONE_GPU = Host(cuda_devices=1, cpus=frozenset(range(224)))


@pytest.mark.parametrize(("edit", "says"), [
    (lambda m: m.update(nodes=5), "nodes: 5 is not a mapping of NUMA node numbers"),
    (lambda m: m["nodes"].update({"0": "0-5x"}), "nodes: {\"0\": \"0-5x\", \"1\": "),
    (lambda m: m["nodes"].update({"zero": "0-3"}), "nodes: {\"0\": "),
    (lambda m: m["gpus"].append({"index": "x", "node": 0}), "gpus[8].index: \"x\" is not a GPU's number from 0 to "),
    (lambda m: m["gpus"].append(3), "gpus: [{"),
    (lambda m: m["gpus"][1].pop("node"), "gpus[1].node: null is not a NUMA node's number from 0 to 1023"),
    (lambda m: m.update(smt="no"), "smt: \"no\" is not true or false"),
    (lambda m: m.update(pool_threads=0), "pool_threads: 0 is not a whole number of threads, at least 1"),
    # every field is checked: a GPU or a CPU listed twice, and numbers past what they count
    (lambda m: m["gpus"].append(dict(m["gpus"][0])),
     "gpus[8].index: GPU 0 is listed twice (gpus[0] too), each GPU once"),
    (lambda m: m["nodes"].update({"1": m["nodes"]["1"] + ",0"}),
     "nodes.1: CPU 0 is on NUMA node 0 too; a CPU is on one node"),
    (lambda m: m["nodes"].update({"0": m["nodes"]["0"] + ",3"}),
     "nodes.0: \"0-55,112-167,3\" names CPU 3 twice, each CPU once"),
    (lambda m: m["nodes"].update({"00": "224-227"}), "nodes: {\"0\": "),
    (lambda m: m.update(pool_threads=10**30),
     "pool_threads: 1000000000000000000000000000000 is not a whole number of threads from 1 to 104, the CPUs of the "
     "largest pool of configs"),
    (lambda m: m["gpus"][0].update(index=1000), "gpus[0].index: 1000 is not a GPU's number from 0 to 999 (a run "),
    (lambda m: m["gpus"][0].update(node=10**30), "gpus[0].node: 1000000000000000000000000000000 is not a NUMA node's "),
    # a GPU the topology does not place: its pools' node could not be judged
    (lambda m: m["gpus"][4].update(node=5), "gpus[4].node: NUMA node 5 is not in the matrix's nodes (it lists nodes "
                                            "0-1), so the CPUs of GPU 4's pools cannot be judged"),
    (lambda m: m["configs"]["n2_pool"].update(devices="0,9"), "configs.n2_pool.devices: GPU 9 is not in the "),
], ids=["nodes", "node_cpus", "node_name", "gpu_index", "gpu_entry", "gpu_node", "smt", "pool_threads", "gpu_twice",
        "cpu_on_two_nodes", "cpu_twice_on_a_node", "node_written_twice", "pool_threads_huge", "gpu_index_huge",
        "gpu_node_huge", "gpu_node_off_nodes", "device_off_gpus"])
def test_auto_on_a_gpu_host_names_a_recorded_matrix_field_of_the_wrong_type(tmp_path, edit, says):
    # preset auto on a GPU host judges the named presets' pools by the matrix's nodes and
    # gpus before any preset is chosen: a wrong field there was a Python error
    matrix = tmp_path / "matrix.json"
    assert main(["plan-matrix", "--lscpu", str(FIXTURES / "eight_gpu_2x56_smt.lscpu"),
                 "--nvidia-smi-topo", str(FIXTURES / "eight_gpu_2x56_smt.topo"), "--output", str(matrix)]) == 0
    data = json.loads(matrix.read_text())
    edit(data)
    with pytest.raises(PlanError) as refused:
        resolve({"preset": "auto"}, PRESETS, ONE_GPU, matrix=data)
    message = str(refused.value)
    assert message.startswith(f"planner: {says}"), message
    assert message.endswith("; correct the file or record it again (`sacscale plan-matrix --output FILE`)")
    assert matrix_named(message, "planned", "m.json").startswith(f"planner.matrix m.json: {says}")
