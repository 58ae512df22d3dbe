"""A checkpoint whose pickle would run code is refused unread, and the line says so without
torch's advice to load it with weights_only=False ("will likely succeed", which would run it)."""

import os
import subprocess
import sys

import torch

from sacscale.saved_tensors import load_weights


class _RunsCode:
    def __reduce__(self):
        return (os.system, ("true",))


def test_a_checkpoint_holding_code_is_refused_without_torchs_advice(tmp_path):
    path = tmp_path / "final.pt"
    torch.save({"actor_flat": torch.zeros(3), "payload": _RunsCode()}, path)
    proc = subprocess.run([sys.executable, "-m", "sacscale.cli", "evaluate", str(path), "--output",
                           str(tmp_path / "e.json")], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "holds Python objects beyond tensors (posix.system), which a checkpoint of weights does not; not " \
           "loaded" in proc.stderr
    assert "weights_only" not in proc.stderr and "safe_globals" not in proc.stderr
    assert not (tmp_path / "e.json").exists()


def test_a_checkpoint_of_weights_still_loads(tmp_path):
    path = tmp_path / "w.pt"
    torch.save({"w": torch.ones(2)}, path)
    assert torch.equal(load_weights(path)["w"], torch.ones(2))
