"""`train --resume` of a run whose train_meta.json is nested 200,000 deep. Before: rc 1
`maximum recursion depth exceeded while decoding a JSON array ...`, naming no file. Now
the file is named with the problem, as bad input (exit 2): nothing of the sitting was written."""

import subprocess
import sys

SMALL = '{"learning_starts": 32, "actor_hidden": [32], "critic_hidden": [32], "num_atoms": 11}'
ARGS = ["--devices", "cpu", "--num-envs", "8", "--batch-size", "32", "--log-every", "2", "--replay-per-env", "16",
        "--num-critic-updates", "1", "--num-actor-updates", "1", "--extra", SMALL, "--timeout-s", "120"]


def train(*argv):
    return subprocess.run([sys.executable, "-m", "sacscale.cli", "train", *map(str, argv)], capture_output=True,
                          text=True, timeout=300)


def test_a_train_meta_nested_too_deep_is_named_with_its_file(tmp_path):
    run = tmp_path / "run"
    assert train("--iterations", "4", *ARGS, "--log-dir", run).returncode == 0
    meta = run / "train_meta.json"
    meta.write_text("[" * 200_000 + "]" * 200_000)
    done = train("--iterations", "6", *ARGS, "--resume", run)
    assert done.returncode == 2 and done.stderr.strip().splitlines() == [(
        f"sacscale train: error: {meta}: not a train_meta.json this trainer wrote (JSON nested too deep)")], done.stderr
