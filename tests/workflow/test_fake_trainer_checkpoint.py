"""The stand-in trainer's checkpoint (tests/workflow/fake_sacscale.py writes it without
importing torch): torch reads it as what torch.save would have written, and the run
wrapper's policy-only copy is made from it."""

import importlib.util

import torch

from sacscale.checks import checkpoint_problem
from sacscale.train.checkpoint import CHECKPOINT_FORMAT, write_policy_only
from pipeline_helpers import FAKE_SACSCALE


def _fake():
    spec = importlib.util.spec_from_file_location("fake_sacscale", FAKE_SACSCALE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_stand_ins_checkpoint_reads_as_torch_saves(tmp_path):
    data = {"format": CHECKPOINT_FORMAT[0], "fake": True, "run": "r", "iteration": 24, "env_steps": 384,
            "model_sha256": "0" * 64, "optimizers": {}}
    _fake().save_like_torch(data, tmp_path / "fake.pt")
    torch.save(data, tmp_path / "torch.pt")
    assert checkpoint_problem(tmp_path / "fake.pt") is None
    assert torch.load(tmp_path / "fake.pt", weights_only=True) == torch.load(tmp_path / "torch.pt", weights_only=True)
    write_policy_only(tmp_path / "fake.pt", tmp_path / "policy.pt")
    policy = torch.load(tmp_path / "policy.pt", weights_only=True)
    assert "optimizers" not in policy and policy["run"] == "r"
    # the format name the stand-in writes is the real one
    assert CHECKPOINT_FORMAT[0] == "sacscale-checkpoint"
    assert '"format": "sacscale-checkpoint"' in FAKE_SACSCALE.read_text()
