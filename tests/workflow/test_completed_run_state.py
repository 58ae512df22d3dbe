"""A completed run's learning state set aside (sacscale.pipeline.completed_run): a reference
run's model files move without importing torch, which only our trainer's checkpoint needs."""

import json
import os
import subprocess
import sys

MOVE = """
import json, sys
from pathlib import Path
from sacscale.pipeline.completed_run import move_learning_state
moved = move_learning_state(Path(sys.argv[1]), Path(sys.argv[2]))
print(json.dumps({"moved": moved, "torch": "torch" in sys.modules}))
"""


def test_a_reference_runs_model_files_move_without_torch(tmp_path):
    work = tmp_path / "run"
    model = work / "ref_logs" / "g1" / "2026-01-01" / "model_100.pt"
    model.parent.mkdir(parents=True)
    model.write_bytes(b"reference weights")
    out = subprocess.run([sys.executable, "-c", MOVE, str(work), str(tmp_path / "state")], capture_output=True,
                         text=True, timeout=120, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["torch"] is False
    assert list(got["moved"]["sha256_by_file"]) == ["ref_logs/g1/2026-01-01/model_100.pt"]
    assert (tmp_path / "state" / "ref_logs" / "g1" / "2026-01-01" / "model_100.pt").read_bytes() == b"reference weights"
    assert not model.exists()
