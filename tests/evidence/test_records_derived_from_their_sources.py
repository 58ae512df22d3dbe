"""verify derives what model.json, the evaluation records, plan.json's description,
train_meta.json's collector pools and run.json state from what they describe: the hashed
model loaded with MuJoCo, the record's own per-command parts, workflow/presets.yaml at the
set's commit, the run's command resolved as the trainer resolves it, and the run wrapper's
own fields. Each edited alone, hashed again, is named."""

import json
import sys

import pytest
from set_copies import copy_committed_set, edit_record as _edit, remake_manifest, REPO

from sacscale.evidence import code_history
from sacscale.evidence.preset_record import preset_findings, reference_presets
from sacscale.evidence.verify import verify

SET = "h200x1_shared_short"
RUN = "shared_r1_n2_shared"
EVAL = "eval/shared_r1_n1_pool7.json"
ROUGH = "g1_walk_rough.mjb"
TWO_GPUS = "Two H200 GPUs over NVLink, one rank on each: the two-GPU claim tested end to end"


def _rename_model(record):
    record["file"] = ROUGH
    record["source"]["mjb"] = ROUGH


def _another_model(record):
    record["summary"]["opt"].update(timestep=0.002, integrator="mjINT_RK4")
    record["summary"]["nu"] = 12


def _cost_x10(record):
    record["physics_cost"]["env_steps_per_s"] *= 10


def _no_falls(record):
    record["overall"]["fall_rate"] = 0.0


def _described(record):
    record["description"] = TWO_GPUS


def _everywhere_pools(record):
    record["collector_pools"]["pools"] = [list(range(16)), list(range(16))]


@pytest.mark.parametrize("rel, edit, says", [
    ("model.json", _rename_model, f"model: model.json file '{ROUGH}', the set's hashed model is "
                                  "model/g1_walk_flat.mjb"),
    ("model.json", _rename_model, f"model: model.json source.mjb '{ROUGH}', plan.json model.from_mjb is "
                                  "'.carry/g1_walk_flat.mjb'"),
    ("model.json", _another_model, "model: model.json summary.nu: stored 12, model/g1_walk_flat.mjb gives 29"),
    ("model.json", _another_model, "model: model.json summary.opt.timestep: stored 0.002, model/g1_walk_flat.mjb gives "
                                   "0.006666666666666667"),
    ("model.json", _another_model, "model: model.json summary.opt.integrator: stored \"mjINT_RK4\", "
                                   "model/g1_walk_flat.mjb gives \"mjINT_IMPLICITFAST\""),
    ("model.json", _cost_x10, "model: model.json physics_cost.env_steps_per_s_per_thread 3568.7607713982666, but "
                              "env_steps_per_s 35687.60771398267 over 1 thread(s) is 35687.60771398267"),
    (EVAL, _no_falls, "eval/shared_r1_n1_pool7.json: overall.fall_rate: stored 0.0, its per_command entries give 1.0"),
    (EVAL, lambda r: r["protocol"].update(envs_per_command=1),
     "eval/shared_r1_n1_pool7.json: protocol.envs_per_command 1 x 11 commands is 11, protocol.num_envs says 88"),
    (EVAL, lambda r: r["protocol"].update(noise_scale=0.5),
     "eval/shared_r1_n1_pool7.json: protocol.actions 'deterministic: tanh(mean)', but noise_scale 0.5 means "
     "\"stochastic: sampled with 0.5 x the policy's std (diagnostic)\""),
    ("plan.json", _described, f"plan.json: description '{TWO_GPUS}' is not preset h200x1_shared's description in "
                              "workflow/presets.yaml at the set's commit 881e5c75bedf: 'One H200 with 16 CPUs, two"),
    (f"runs/{RUN}/train_meta.json", _everywhere_pools,
     f"{RUN}: train_meta.json collector_pools.pools [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15], [0, 1, 2, "
     "3, 4, 5, 6..., but the run's command (as the trainer resolves it) gives [[1, 2, 3, 4, 5, 6, 7], [9, 10, 11, 12, "
     "13, 14, 15]]"),
    (f"runs/{RUN}/train_meta.json", lambda r: r["collector_pools"].update(how="explicit: 1-15;0"),
     f"{RUN}: train_meta.json collector_pools.how explicit: 1-15;0, but the run's command"),
    (f"runs/{RUN}/train_meta.json", lambda r: r["collector_pools"].update(learner_affinity=[[0], [0]]),
     f"{RUN}: train_meta.json collector_pools.learner_affinity [[0], [0]], but the run's command (as the trainer "
     "resolves it) gives [[0], [8]]"),
    (f"runs/{RUN}/run.json", lambda r: r.update(timed_out=True),
     f"{RUN}: run.json status 'completed', but its timed_out True, interrupted_by None and exit_status 0 give "
     "'timed_out' (the run wrapper's status)"),
    (f"runs/{RUN}/run.json", lambda r: r.update(command_line=r["command_line"].replace("0,0", "0,1")),
     f"{RUN}: run.json command_line \"sacscale train --devices 0,1 "),
    (f"runs/{RUN}/run.json", lambda r: r.update(duration_s=r["duration_s"] / 2),
     f"{RUN}: run.json duration_s"),
])
def test_a_record_states_only_what_its_source_gives(tmp_path, rel, edit, says):
    root = copy_committed_set(tmp_path, SET)
    _edit(root, rel, edit)
    if rel == "plan.json":  # and environment.json's copy, as the reviewer did
        _edit(root, "environment.json", lambda r: _described(r["plan"]))
    remake_manifest(root)
    records = verify(root, report_pending=True).records
    assert any(p.startswith(says) for p in records), records


def test_environment_json_holds_the_plan_itself(tmp_path):
    root = copy_committed_set(tmp_path, SET)
    _edit(root, "environment.json", lambda r: r["plan"].update(repeats=9))
    remake_manifest(root)
    assert "set: environment.json plan is not plan.json (they differ in repeats): verify-env stores the plan it " \
           "checked" in verify(root, report_pending=True).records


def test_without_mujoco_the_summary_is_said_not_derived(tmp_path, monkeypatch):
    """A verifier without MuJoCo still checks the rest, and says where its verdict is read
    what it could not derive."""
    root = copy_committed_set(tmp_path, SET)
    _edit(root, "model.json", _another_model)
    remake_manifest(root)
    monkeypatch.setitem(sys.modules, "mujoco", None)
    monkeypatch.setitem(sys.modules, "sacscale.mujoco_lib", None)  # imported by an earlier test perhaps
    monkeypatch.setitem(sys.modules, "sacscale.task.g1_model", None)
    result = verify(root, report_pending=True)
    assert not [p for p in result.records if p.startswith("model:")], result.records
    assert any(c.startswith("model.json summary: not derived from model/g1_walk_flat.mjb: MuJoCo cannot be imported "
                            "here") for c in result.covered), result.covered


def _shallow_clone(code_root) -> bool:
    return code_history.is_shallow(code_root)


@pytest.mark.skipif(_shallow_clone(REPO), reason="a shallow clone lacks the set's commit")
def test_a_dirty_trees_presets_are_the_commits_with_its_stored_diff():
    """h200x1_learning_obsnorm was planned from a tree whose stored diff rewords a preset."""
    root = REPO / "results" / "h200x1_learning_obsnorm"
    text, where = reference_presets(root, json.loads((root / "environment.json").read_text()))
    assert where == "workflow/presets.yaml at the set's commit c503f64cb6b1 with its stored diff source.diff"
    assert "One H200 with 16 CPUs, learning side by side" in text


def test_without_the_sets_commit_the_checkouts_presets_are_the_reference(tmp_path):
    (tmp_path / "workflow").mkdir()
    (tmp_path / "workflow" / "presets.yaml").write_text("presets:\n  h200x1_shared: {description: ' Other words '}\n")
    root = REPO / "results" / SET
    plan = json.loads((root / "plan.json").read_text())
    env = json.loads((root / "environment.json").read_text())
    problems, _, _ = preset_findings(root, plan, env, code_root=tmp_path)
    assert problems == [f"plan.json: description {plan['description'][:77] + '...'!r} is not preset h200x1_shared's "
                        "description in this checkout's workflow/presets.yaml (the set's commit 881e5c75bedf cannot "
                        "be read from its git history): 'Other words'"]
    (tmp_path / "workflow" / "presets.yaml").unlink()
    assert preset_findings(root, plan, env, code_root=tmp_path) == (
        [], [f"plan.json description: not compared with the preset's: no workflow/presets.yaml beside this code "
             f"({tmp_path})"], [])


def test_in_a_shallow_clone_a_missing_commit_is_not_compared(monkeypatch):
    """Today's presets would misjudge a set planned with older words: a shallow clone says so."""
    answers = {"show": None, "rev-parse": "true\n"}
    monkeypatch.setattr(code_history, "git_output", lambda args, cwd: answers[args[0]])
    root = REPO / "results" / SET
    plan = json.loads((root / "plan.json").read_text())
    env = json.loads((root / "environment.json").read_text())
    assert preset_findings(root, plan, env) == (
        [], ["plan.json description: not compared with the preset's: the set's commit 881e5c75bedf is not in this "
             "shallow clone's history (fetch it with --unshallow)"], [])


def test_a_run_configs_trainer_is_the_one_its_runs_command_ran(tmp_path):
    """The page's trainers table is written from the run configs' `trainer`."""
    root = copy_committed_set(tmp_path, SET)
    _edit(root, "plan.json", lambda r: r["run_configs"]["n1_pool7"].update(trainer="unilab"))
    _edit(root, "environment.json", lambda r: r["plan"]["run_configs"]["n1_pool7"].update(trainer="unilab"))
    remake_manifest(root)
    records = verify(root, report_pending=True).records
    assert "shared_r1_n1_pool7: trainer: plan.json says 'unilab', run.json command says 'sacscale'" in records, records
