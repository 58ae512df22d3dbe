"""--learner-cpu-ids: the run pins its learner beside the collector's pool and records it."""

import json
import os
import subprocess
import sys

import pytest

CPUS = sorted(os.sched_getaffinity(0))


@pytest.mark.skipif(len(CPUS) < 2, reason="needs 2 usable CPUs")
def test_run_with_learner_pinned_outside_the_pool(tmp_path):
    run = tmp_path / "run"
    # a subprocess: a 1-rank run trains in the calling process, which pinning would confine
    cmd = [sys.executable, "-m", "sacscale.cli", "train", "--devices", "cpu", "--num-envs", "8",
           "--batch-size", "32", "--iterations", "4", "--log-every", "2", "--replay-per-env", "16",
           "--num-critic-updates", "1", "--num-actor-updates", "1", "--no-compile",
           "--extra", '{"learning_starts": 16, "actor_hidden": [16], "critic_hidden": [16], "num_atoms": 11}',
           "--collector-cpu-ids", str(CPUS[1]),
           "--learner-cpu-ids", str(CPUS[0]), "--log-dir", str(run), "--timeout-s", "120"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    # learning starts at 16 rows = iteration 2; the run wrapper reads this line
    assert "sacscale train: rank 0: first learner update done at iteration 2 (" in done.stderr
    meta = json.loads((run / "train_meta.json").read_text())
    assert meta["status"] == "completed"
    assert meta["collector_pools"]["pools"] == [[CPUS[1]]]
    assert meta["collector_pools"]["learner_affinity"] == [[CPUS[0]]]


def test_learner_cpus_inside_a_pool_fail_before_starting(tmp_path):
    from sacscale.cli import main

    code = main(["train", "--devices", "cpu", "--collector-cpu-ids", str(CPUS[0]),
                 "--learner-cpu-ids", str(CPUS[0]), "--log-dir", str(tmp_path / "r")])
    assert code == 2  # bad input: refused before anything starts
    assert not (tmp_path / "r" / "train_meta.json").exists()
