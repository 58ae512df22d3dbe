"""A recorded matrix's configs.<name>.learner_cpus, the learner cores plan-matrix reserves,
checked as the trainer checks --learner-cpu-ids: one CPU list per rank, none in a collector
pool, no CPU of two ranks' learners. `["1", "1"]`, both learners on one CPU inside rank 0's
pool, was taken into the plan unchecked."""

import pytest

import json
from pathlib import Path

from sacscale.parallel.matrix import plan_matrix, preset_from_matrix
from sacscale.parallel.matrix_shape import check_matrix_shape
from sacscale.parallel.topology import Topology, TopologyError, parse_lscpu, parse_nvidia_topo

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "topology"

POOLS = {"devices": "0,1", "cpu_pools": ["1-13", "15-27"]}
REDO = "correct the file or record it again (`sacscale plan-matrix --output FILE`)"


@pytest.mark.parametrize(("learners", "says"), [
    (["1", "1"], "rank 0's learner CPUs 1 are in a collector pool (cpu_pools)"),
    (["0", "0"], "the learners of ranks 0 and 1 share CPUs 0"),
    (["0"], "1 CPU list(s) for 2 rank(s) (devices \"0,1\"); one list per rank"),
    ("0;14;28", "3 CPU list(s) for 2 rank(s) (devices \"0,1\"); one list per rank"),
    (["0", "x"], "rank 1: \"x\" is not a CPU list such as '8-39' or '0,2-5'"),
    (["0", "14,14"], "rank 1: \"14,14\" names CPU(s) 14 twice; name each CPU once"),
    (["0", "0-4000000000"], "rank 1: \"0-4000000000\" is not a CPU list such as '8-39' or '0,2-5'"),
    ("0;20", "rank 1's learner CPUs 20 are in a collector pool (cpu_pools)"),
], ids=["in_rank0_pool", "shared", "too_few", "too_many", "not_a_list", "named_twice", "past_the_ids",
        "joined_in_pool"])
def test_learner_cpus_no_trainer_would_take_are_named(learners, says):
    with pytest.raises(TopologyError) as refused:
        check_matrix_shape({"n2_pool": {**POOLS, "learner_cpus": learners}}, ["n2_pool"], None)
    assert str(refused.value) == f"planner: configs.n2_pool.learner_cpus: {says}; {REDO}"


@pytest.mark.parametrize("learners", [["0", "14"], "0;14", ["0,28", "14"]])
def test_learner_cpus_outside_the_pools_pass(learners):
    check_matrix_shape({"n2_pool": {**POOLS, "learner_cpus": learners}}, ["n2_pool"], None)


@pytest.mark.parametrize("fixture", ["eight_gpu_2x56_smt", "h200x2", "h200x1", "seed_2x40_smt_2gpu"])
@pytest.mark.parametrize("smt", [False, True])
def test_every_matrix_plan_matrix_writes_passes(fixture, smt):
    topo = Topology(parse_lscpu((FIXTURES / f"{fixture}.lscpu").read_text()),
                    parse_nvidia_topo((FIXTURES / f"{fixture}.topo").read_text()))
    matrix = plan_matrix(topo, smt=smt)
    assert any("learner_cpus" in entry for entry in matrix["configs"].values())
    preset_from_matrix({}, matrix, "planned")


def test_the_recorded_live_matrix_passes():
    preset_from_matrix({}, json.loads((FIXTURES / "h200x1_live.matrix.json").read_text()), "planned")
