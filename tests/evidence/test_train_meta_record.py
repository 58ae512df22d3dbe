"""verify derives train_meta.json's fields from what lies beside it: its options from the
run's command (the trainer's own parser and defaults), its devices and world size from
`--devices`, its fault counters from the ranks' events, its state hashes from the world
size, the gradient sync and a kept checkpoint. Each edited alone, hashed again, named."""

import pytest
import torch
from set_copies import copy_committed_set, edit_record as _edit, remake_manifest

from sacscale.evidence.verify import verify
from sacscale.train.record import state_digest

SET = "h200x1_shared_recheck"  # made by this code: every field is there
TWO = "shared_r1_n2_shared"  # 2 ranks sharing a GPU, gradients synced (grad_sync auto)
ONE = "shared_r1_n1_pool7"  # 1 rank; keeps its policy-only checkpoints/final.pt
HASH = "ab" * 32


def _meta(run):
    return f"runs/{run}/train_meta.json"


def _records(root):
    remake_manifest(root)
    return verify(root, report_pending=True).records


def _config(**changed):
    return lambda r: r["config"].update(changed)


def _drop_option(name):
    return lambda r: r["config"].pop(name)


def _nonfinite(rows, targets, sources=None):
    def edit(r):
        r.update(nonfinite_rows_by_rank=rows, nonfinite_rows=sum(rows), nonfinite_targets=targets)
        r["nonfinite_target_sources"].update(sources or {})
    return edit


def _start_after_end(r):
    r["start_time"] = r["end_time"] + 0.5


def _digests(digests, identical):
    return lambda r: r.update(final_learner_state_sha256_by_rank=digests, ranks_identical=identical)


@pytest.mark.parametrize("rel, edit, says", [
    (_meta(TWO), _config(grad_sync="off"),
     f"{TWO}: train_meta.json config.grad_sync 'off', but the run's command (parsed with the trainer's parser and "
     "defaults) gives 'auto'"),
    (_meta(TWO), _config(batch_size=4096), f"{TWO}: train_meta.json config.batch_size 4096, but the run's command"),
    (_meta(TWO), _config(compile=False), f"{TWO}: train_meta.json config.compile False, but the run's command"),
    (_meta(TWO), _config(log_dir="elsewhere/run"),
     f"{TWO}: train_meta.json config.log_dir 'elsewhere/run', but the run's command (parsed with the trainer's "
     "parser and defaults) gives 'results/h200x1_shared_recheck/runs/.shared_r1_n2_shared.partial'"),
    (_meta(TWO), _drop_option("obs_norm"), f"{TWO}: train_meta.json config has no obs_norm, an option of the run's "
                                           "trainer"),
    (_meta(TWO), _config(fast=True), f"{TWO}: train_meta.json config.fast: not an option of the run's trainer"),
    (f"runs/{TWO}/run.json", lambda r: r.update(log_dir_while_running="elsewhere/run"),
     f"{TWO}: run.json log_dir_while_running 'elsewhere/run', but the run's command gives --log-dir "
     "'results/h200x1_shared_recheck/runs/.shared_r1_n2_shared.partial'"),
    (_meta(TWO), lambda r: r.update(devices=["cuda:0", "cuda:1"]),
     f"{TWO}: train_meta.json devices ['cuda:0', 'cuda:1'], but the run's command (--devices 0,0) gives "
     "['cuda:0', 'cuda:0']"),
    (_meta(ONE), lambda r: r.update(world_size=2),
     f"{ONE}: train_meta.json world_size 2, but the run's command (--devices 0) gives 1 rank(s)"),
    (_meta(TWO), _start_after_end, f"{TWO}: train_meta.json start_time "),
    (_meta(TWO), _nonfinite([2, 1], 0),
     f"{TWO}: train_meta.json nonfinite_rows_by_rank [2, 1], but the ranks' events end with Faults/nonfinite_rows "
     "[0, 0]"),
    (_meta(TWO), _nonfinite([0, 0], 2, {"next_value": 2}),
     f"{TWO}: train_meta.json nonfinite_targets 2, but the ranks' events end with Faults/nonfinite_targets summing "
     "to 0"),
    (_meta(TWO), _nonfinite([0, 0], 0, {"reward": 3}),
     f"{TWO}: train_meta.json nonfinite_target_sources {{'reward': 3}}: not counts of the 0 non-finite target(s)"),
    (_meta(ONE), _digests([HASH, HASH], True),
     f"{ONE}: train_meta.json final_learner_state_sha256_by_rank holds 2 hash(es), world_size is 1"),
    (_meta(TWO), _digests([HASH], True),
     f"{TWO}: train_meta.json final_learner_state_sha256_by_rank holds 1 hash(es), world_size is 2"),
    (_meta(TWO), _digests([HASH, "cd" * 32], False),
     f"{TWO}: train_meta.json final_learner_state_sha256_by_rank: rank(s) [1] differ from rank 0's, but the run "
     "synced gradients (grad_sync auto, 2 ranks) and completed: the trainer fails such a run"),
    (_meta(ONE), _digests(["not a hash"], True),
     f"{ONE}: train_meta.json final_learner_state_sha256_by_rank ['not a hash']: not one SHA-256"),
])
def test_a_train_meta_field_its_neighbours_do_not_give_is_named(tmp_path, rel, edit, says):
    root = copy_committed_set(tmp_path, SET)
    _edit(root, rel, edit)
    records = _records(root)
    assert any(p.startswith(says) for p in records), records


def test_ranks_apart_without_gradient_sync_are_only_recorded(tmp_path):
    root = copy_committed_set(tmp_path, SET)
    _edit(root, _meta(TWO), _digests([HASH, "cd" * 32], False))
    _edit(root, _meta(TWO), _config(grad_sync="off"))
    records = _records(root)
    assert not any("final_learner_state_sha256_by_rank" in p for p in records), records


def _keep_full_checkpoint(root, run, tensors):
    """The run's final.pt as the trainer writes it (with its learning state), and its run.json
    without the record of a learning state moved out."""
    path = root / "runs" / run / "checkpoints" / "final.pt"
    ckpt = torch.load(path, map_location="cpu", weights_only=True)
    ckpt.pop("policy_only_of")
    torch.save({**ckpt, "learner_state": tensors, "optimizers": {}}, path)
    _edit(root, f"runs/{run}/run.json", lambda r: r.pop("learning_state"))


def test_a_kept_learner_state_gives_rank_0s_hash(tmp_path):
    root = copy_committed_set(tmp_path, SET)
    tensors = {"actor": torch.arange(6, dtype=torch.float32), "log_alpha": torch.zeros(1)}
    _keep_full_checkpoint(root, ONE, tensors)
    _edit(root, _meta(ONE), _digests([state_digest(tensors)], True))
    assert not any("final_learner_state_sha256_by_rank" in p for p in _records(root))
    _edit(root, _meta(ONE), _digests([HASH], True))
    records = _records(root)
    assert f"{ONE}: train_meta.json final_learner_state_sha256_by_rank[0] abababababab..., but the learner state in " \
           f"checkpoints/final.pt hashes to {state_digest(tensors)[:12]}..." in records, records


def test_the_reference_trainers_options_are_its_command(tmp_path):
    root = copy_committed_set(tmp_path, "h200x1_ref")
    _edit(root, _meta("pair_r1_ref_n1"), _config(override=["algo.batch_size=4096"], meshes="other/meshes"))
    records = _records(root)
    assert "pair_r1_ref_n1: train_meta.json config.override ['algo.batch_size=4096'], but the run's command (parsed " \
           "with the trainer's parser and defaults) gives ['algo.batch_size=8192']" in records, records
    assert "pair_r1_ref_n1: train_meta.json config.meshes 'other/meshes', but the run's command (parsed with the " \
           "trainer's parser and defaults) gives '.carry/g1-meshes'" in records, records
