"""`sacscale train` under torchrun on two "nodes": two torchrun agents on one host, on
loopback, each starting 2 gloo ranks (`--devices cpu,cpu` lists a node's devices by
LOCAL_RANK), with the c10d rendezvous of templates/slurm/train-multinode.sbatch. The 4
ranks end bit-identical and the env steps add up over both nodes.

Also: the end-of-run agreement check records different states when the sync is off, so
it can tell ranks apart, and fails a synced run whose ranks ended apart; and the two
all-reduce placements learn the same (on CPU both run eagerly: the CUDA graph segments of
`--allreduce between-graphs` are checked in tests/learn/test_graph_gpu.py)."""

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from sacscale.analysis.events import read_run
from sacscale.evidence.train_meta_record import train_meta_problems
from sacscale.train import TrainingError
from sacscale.train.options import build_parser
from sacscale.train.record import check_ranks_agree, state_digest

TINY = '{"learning_starts": 64, "actor_hidden": [32], "critic_hidden": [32], "num_atoms": 11}'
ITERATIONS = 12


def _train_args(model: Path, log_dir: Path, *extra: str) -> list[str]:
    return ["train", "--devices", "cpu,cpu", "--num-envs", "8", "--batch-size", "32",
            "--num-critic-updates", "1", "--num-actor-updates", "1", "--iterations", str(ITERATIONS),
            "--replay-per-env", "16", "--log-every", "2", "--timeout-s", "120", "--sim-threads", "1",
            "--model", str(model), "--log-dir", str(log_dir), "--extra", TINY, *extra]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    from sacscale.task.g1_model import build_g1_model, save_model

    path = tmp_path_factory.mktemp("model") / "g1_walk_flat.mjb"
    save_model(build_g1_model(), path)
    return path


def test_two_torchrun_nodes_of_two_ranks_stay_identical_and_add_up(model, tmp_path):
    torchrun = shutil.which("torchrun", path=os.path.dirname(sys.executable)) or shutil.which("torchrun")
    assert torchrun, "torchrun (installed with torch) not found"
    log_dir, port = tmp_path / "run", _free_port()
    nodes = []
    for _node in (0, 1):
        cmd = [torchrun, "--nnodes", "2", "--nproc-per-node", "2", "--rdzv-backend", "c10d",
               "--rdzv-endpoint", f"127.0.0.1:{port}", "--rdzv-id", "two-nodes",
               "-m", "sacscale.cli", *_train_args(model, log_dir)]
        nodes.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    outputs = []
    for proc in nodes:
        try:
            out, _ = proc.communicate(timeout=400)  # four ranks and collectors on a loaded 2-core machine
        finally:
            if proc.poll() is None:
                proc.kill()
        outputs.append(out)
    assert [p.returncode for p in nodes] == [0, 0], "\n".join(o[-3000:] for o in outputs)

    meta = json.loads((log_dir / "train_meta.json").read_text())
    assert meta["status"] == "completed" and meta["world_size"] == 4
    digests = meta["final_learner_state_sha256_by_rank"]
    assert len(digests) == 4 and len(set(digests)) == 1 and meta["ranks_identical"] is True

    ranks = read_run(log_dir)
    assert sorted(ranks) == [0, 1, 2, 3]
    per_rank = {r: {s.step: s.value for s in ranks[r]["Perf/rank_env_steps"]} for r in ranks}
    assert all(per_rank[r] == per_rank[0] for r in ranks)
    assert per_rank[0][ITERATIONS] == 8 * ITERATIONS
    total = {s.step: s.value for s in ranks[0]["Perf/total_env_steps"]}
    assert total and all(total[it] == sum(per_rank[r][it] for r in ranks) for it in total)  # all nodes summed


def test_ranks_without_sync_are_recorded_apart(model, tmp_path):
    from sacscale.cli import main

    log_dir = tmp_path / "run"
    assert main(_train_args(model, log_dir, "--grad-sync", "off")) == 0
    meta = json.loads((log_dir / "train_meta.json").read_text())
    digests = meta["final_learner_state_sha256_by_rank"]
    assert len(digests) == 2 and digests[0] != digests[1] and meta["ranks_identical"] is False
    # what verify derives these fields from, where a set keeps them: the full final.pt, the
    # command (parsed by the trainer's parser), the events' fault counters
    ckpt = torch.load(log_dir / "checkpoints" / "final.pt", map_location="cpu", weights_only=True)
    assert state_digest(ckpt["learner_state"]) == digests[0]
    args = _train_args(model, log_dir, "--grad-sync", "off")
    run = {"command": ["sacscale", *args], "log_dir_while_running": str(log_dir)}
    parsed = build_parser().parse_args(args[1:])
    assert train_meta_problems(log_dir, "run", meta, run, parsed, reference=False, strict=True) == []


def test_a_synced_run_whose_ranks_ended_apart_fails():
    with pytest.raises(TrainingError, match=r"rank\(s\) \[2\] differs from rank 0's"):
        check_ranks_agree(["a" * 64, "a" * 64, "b" * 64], rank=0, synced=True)
    assert check_ranks_agree(["a" * 64] * 3, rank=1, synced=True)["ranks_identical"] is True


def test_both_allreduce_placements_give_the_same_parameters(model, tmp_path):
    from sacscale.cli import main

    digests = {}
    for mode in ("in-graph", "between-graphs"):
        log_dir = tmp_path / mode
        assert main(_train_args(model, log_dir, "--allreduce", mode)) == 0
        meta = json.loads((log_dir / "train_meta.json").read_text())
        assert meta["config"]["allreduce"] == mode and meta["ranks_identical"] is True
        digests[mode] = meta["final_learner_state_sha256_by_rank"]
    assert digests["in-graph"] == digests["between-graphs"]
