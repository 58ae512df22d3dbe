"""A kept policy whose train_config holds a value of a type the trainer never writes (a
tensor, an object where a number goes) is one named problem among verify's findings, not an
unexpected error that stops verify; and an unexpected error still leaves --output written."""

import json

import pytest
import torch
from set_copies import remake_manifest

from sacscale.cli import main
from sacscale.evidence.verify import verify

KEPT = "shared_r1_n1_pool7"
POLICY = f"runs/{KEPT}/checkpoints/final.pt"


@pytest.mark.parametrize("key, value, kind", [
    ("seed", torch.tensor([1, 2]), "Tensor"),
    ("num_envs", {"n": 2048}, "dict"),
    ("compile", 1, "int"),
])
def test_a_value_of_another_type_is_named(work, key, value, kind):
    path = work / POLICY
    ckpt = torch.load(path, map_location="cpu", weights_only=True)
    ckpt["train_config"][key] = value
    torch.save(ckpt, path)
    remake_manifest(work)
    records = verify(work).records
    assert (f"{KEPT}: {POLICY}: 'train_config.{key}' is {kind}: a type the trainer never writes there"
            in records)
    # the other findings are kept: the evaluation no longer names this file's hash
    assert any(p.startswith(f"eval/{KEPT}.json: evaluated a policy hashing") for p in records), records


def test_an_unexpected_error_still_writes_the_output(work, tmp_path, monkeypatch, capsys):
    def fails(*args, **kwargs):
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    monkeypatch.setattr("sacscale.evidence.verify.verify", fails)
    monkeypatch.delenv("SACSCALE_TRACEBACK", raising=False)
    out = tmp_path / "v.json"
    assert main(["verify", str(work), "--output", str(out)]) == 1
    assert "RuntimeError: Boolean value of Tensor" in capsys.readouterr().err
    written = json.loads(out.read_text())
    assert written["ok"] is False
    assert written["structure"] == ["verify stopped: RuntimeError: Boolean value of Tensor with more than one value "
                                    "is ambiguous (unexpected; SACSCALE_TRACEBACK=1 shows where)"]
