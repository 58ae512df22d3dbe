"""Every load of a checkpoint in the package (train's read_checkpoint and policy-only copy,
evaluate's read_checkpoint) hides only the notes torch prints when it rebuilds a quantized
tensor (a crafted file's, refused by name after the load): the policy-only copy printed them,
and the two readers hid every other UserWarning of the load with them."""

import warnings

import pytest
import torch

from sacscale.eval import evaluate
from sacscale.eval.evaluate_checks import CheckpointError
from sacscale.train import checkpoint
from sacscale.train.config import TrainingError


def _quantized_checkpoint(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's deprecation of quantized tensors: made here on purpose
        flat = torch.quantize_per_tensor(torch.zeros(4), 0.1, 0, torch.qint8)
    torch.save({"format": "sacscale-checkpoint", "version": 2, "actor_flat": flat}, path)
    return path


def _train_read(path):
    return checkpoint.read_checkpoint(path)


def _policy_only(path):
    return checkpoint.write_policy_only(path, path.with_name("policy.pt"))


def _evaluate_read(path):
    try:
        return evaluate.read_checkpoint(path)
    except CheckpointError:  # refused after the load: no actor settings
        return None


READERS = {"train_read": _train_read, "policy_only": _policy_only, "evaluate_read": _evaluate_read}


@pytest.mark.parametrize("read", READERS.values(), ids=READERS.keys())
def test_a_quantized_tensor_loads_without_torchs_notes(tmp_path, read):
    path = _quantized_checkpoint(tmp_path / "final.pt")
    torch.storage._reset_warn_typed_storage_removal()  # torch says it once a process
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read(path)


@pytest.mark.parametrize("read", READERS.values(), ids=READERS.keys())
def test_another_warning_of_the_load_shows(tmp_path, monkeypatch, read):
    path = _quantized_checkpoint(tmp_path / "final.pt")
    real_load = torch.load

    def load_with_a_note(*args, **kwargs):
        warnings.warn("a note of the load that is not torch's quantized one", UserWarning, stacklevel=2)
        return real_load(*args, **kwargs)

    monkeypatch.setattr(torch, "load", load_with_a_note)
    with pytest.warns(UserWarning, match="not torch's quantized one"):
        try:
            read(path)
        except TrainingError:
            pass
