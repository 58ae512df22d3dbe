"""The records' CPU pools, compilation, replay checkpointing, model path and learner settings
(`extra`) are bound to the kept policy's train_config too: the set's pool (the variable it measures) moved in every
record against the hashed checkpoint no longer passes."""

import pytest
import torch
from set_copies import remake_manifest

from sacscale.evidence.verify import verify

KEPT = "shared_r1_n1_pool7"
MODEL = "results/h200x1_shared_short/model/g1_walk_flat.mjb"


def _checkpoint_saying(root, key, value):
    path = root / "runs" / KEPT / "checkpoints" / "final.pt"
    ckpt = torch.load(path, map_location="cpu", weights_only=True)
    ckpt["train_config"][key] = value
    torch.save(ckpt, path)
    remake_manifest(root)


@pytest.mark.parametrize("key, recorded, value", [
    ("collector_cpu_ids", "'1-7'", "1-6"),
    ("learner_cpu_ids", "'0'", "auto"),
    ("compile", "True", False),
    ("cuda_graph", "True", False),
    ("checkpoint_replay", "False", True),
    ("model", repr(MODEL), "/elsewhere/model/g1_walk_flat.mjb"),
    ("extra", "{}", {"gamma": 0.9}),  # the learner's own settings
])
def test_a_setting_the_checkpoint_contradicts_is_named(work, key, recorded, value):
    _checkpoint_saying(work, key, value)
    assert (f"{KEPT}: train_meta.json config.{key} {recorded} (as the other records), but the run's hashed "
            f"checkpoints/final.pt holds train_config.{key} {value!r}") in verify(work).records
