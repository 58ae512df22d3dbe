"""A run's records are bound to the settings its hashed policy checkpoint holds
(checkpoints/final.pt train_config): a seed or batch size moved in every JSON record, its
manifest made again, no longer verifies, since the trainer's own output says otherwise."""

import pytest
import torch
from set_copies import copy_committed_set, remake_manifest

from sacscale.evidence.verify import verify

SET = "h200x1_shared_short"
KEPT = "shared_r1_n1_pool7"  # the one run whose policy the set keeps
LEFT_OUT = "shared_r1_n2_shared"


def _checkpoint_saying(root, key, value):
    """The kept policy's train_config.KEY set to VALUE: the records, untouched, now state the
    old value against it, as records moved consistently would against the trainer's."""
    path = root / "runs" / KEPT / "checkpoints" / "final.pt"
    ckpt = torch.load(path, map_location="cpu", weights_only=True)
    ckpt["train_config"][key] = value
    torch.save(ckpt, path)
    remake_manifest(root)


@pytest.mark.parametrize("key, value, says", [
    ("seed", 7, f"{KEPT}: train_meta.json config.seed 1 (as the other records), but the run's hashed "
                "checkpoints/final.pt holds train_config.seed 7"),
    ("batch_size", 128, f"{KEPT}: train_meta.json config.batch_size 8192 (as the other records), but the run's "
                        "hashed checkpoints/final.pt holds train_config.batch_size 128"),
])
def test_a_setting_the_checkpoint_contradicts_is_named(tmp_path, key, value, says):
    root = copy_committed_set(tmp_path, SET)
    _checkpoint_saying(root, key, value)
    assert says in verify(root).records


def test_a_policy_left_out_by_design_is_a_note(tmp_path):
    result = verify(copy_committed_set(tmp_path, SET))
    assert result.records == []
    assert f"{LEFT_OUT}: runs/{LEFT_OUT}/checkpoints/final.pt is left out of the set by design (evidence.json " \
           "lists its hash): the settings it holds (train_config) are not compared with the records" in result.notes


def _checkpoint_stripped(root, keys=None):
    """The kept policy's train_config removed (keys None) or some of its keys removed."""
    path = root / "runs" / KEPT / "checkpoints" / "final.pt"
    ckpt = torch.load(path, map_location="cpu", weights_only=True)
    if keys is None:
        del ckpt["train_config"]
    else:
        for key in keys:
            del ckpt["train_config"][key]
    torch.save(ckpt, path)
    remake_manifest(root)


def test_a_checkpoint_stripped_of_its_settings_is_named_in_a_set_made_by_this_code(work):
    """A forger who cannot move the checkpoint's seed removes it: in a set made by this code
    that is named, not a note."""
    _checkpoint_stripped(work)
    assert (f"{KEPT}: runs/{KEPT}/checkpoints/final.pt holds no train_config: the records' settings are not "
            "compared with it, though the trainer writes it into every checkpoint") in verify(work).records


def test_a_checkpoint_missing_some_settings_is_named_in_a_set_made_by_this_code(work):
    _checkpoint_stripped(work, ["seed", "batch_size"])
    assert (f"{KEPT}: runs/{KEPT}/checkpoints/final.pt's train_config lacks seed, batch_size, which the trainer "
            "writes: the records' settings rest on nothing there") in verify(work).records
