"""verify derives the fields a record states from what lies beside it: model.json's size
and MuJoCo version, train_meta.json's summaries of its by-rank fields and of the run's
command, and run.json's env_set from the plan. Each edited alone, hashed again, passed."""

import pytest
from set_copies import copy_committed_set, current_copy, edit_record as _edit, remake_manifest

from sacscale.evidence.verify import verify

SET = "h200x1_shared_short"
RUN = "shared_r1_n2_shared"
META = f"runs/{RUN}/train_meta.json"


def _mujoco(record):
    record["mujoco_version"] = "3.2.0"
    record["summary"]["mujoco_version"] = "3.2.0"


@pytest.mark.parametrize("rel, edit, says", [
    ("model.json", lambda r: r.update(bytes=1234), "model: model.json bytes 1234, model/g1_walk_flat.mjb is 79,632 "
                                                   "bytes"),
    ("model.json", _mujoco, "model: model.json mujoco_version '3.2.0', environment.json versions.mujoco '4.0.0'"),
    ("model.json", _mujoco, "model: model.json summary.mujoco_version '3.2.0', environment.json"),
    (META, lambda r: r["final_learner_state_sha256_by_rank"].__setitem__(1, "0" * 64),
     f"{RUN}: train_meta.json ranks_identical True, but final_learner_state_sha256_by_rank gives False"),
    (META, lambda r: r.update(nonfinite_rows_by_rank=[3, 0]),
     f"{RUN}: train_meta.json nonfinite_rows 0, but nonfinite_rows_by_rank sums to 3"),
    (META, lambda r: r.update(losses_compiled=True),
     f"{RUN}: train_meta.json losses_compiled True, but the run's command gives False"),
    (f"runs/{RUN}/run.json",
     lambda r: r.update(env_set={"NCCL_NVLS_ENABLE": "0", "CUDA_VISIBLE_DEVICES": "1", "OMP_NUM_THREADS": "64"}),
     f"{RUN}: run.json env_set {{CUDA_VISIBLE_DEVICES=1, NCCL_NVLS_ENABLE=0, OMP_NUM_THREADS=64}}, but plan.json's "
     "run configuration gives {NCCL_NVLS_ENABLE=0}"),
    (f"runs/{RUN}/run.json", lambda r: r.update(env_set={}), f"{RUN}: run.json env_set {{}}, but plan.json's"),
])
def test_a_field_its_neighbours_do_not_give_is_named(tmp_path, rel, edit, says):
    root = current_copy(tmp_path, SET)
    _edit(root, rel, edit)
    remake_manifest(root)
    records = verify(root, report_pending=True).records
    assert any(p.startswith(says) for p in records), records


def test_the_reference_trainers_own_variables_are_the_pipelines(tmp_path):
    root = copy_committed_set(tmp_path, "h200x1_ref")
    assert verify(root).records == []
    _edit(root, "runs/pair_r1_ref_n1/run.json", lambda r: r["env_set"].update(OMP_NUM_THREADS="1"))
    remake_manifest(root)
    assert any(p.startswith("pair_r1_ref_n1: run.json env_set") for p in verify(root).records)
