"""What the crafted-resume tests share: a tiny CPU run trained once, a run's final.pt changed
in place, and a copy of a run whose final.pt is changed."""

import shutil
import subprocess
import sys

import torch

SMALL = '{"learning_starts": 16, "actor_hidden": [16], "critic_hidden": [16], "num_atoms": 11}'
TINY_ARGS = ["--devices", "cpu", "--num-envs", "4", "--batch-size", "16", "--log-every", "1", "--replay-per-env", "16",
             "--num-critic-updates", "1", "--num-actor-updates", "1", "--extra", SMALL, "--no-compile",
             "--sim-threads", "1", "--timeout-s", "120"]


def trained_run(folder, iterations, *extra):
    """folder/run: a finished tiny CPU run of `iterations`, with the trainer options `extra`."""
    run = folder / "run"
    done = subprocess.run([sys.executable, "-m", "sacscale.cli", "train", *TINY_ARGS, *extra, "--iterations",
                           str(iterations), "--log-dir", str(run)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return run


def edit_final(run, edit):
    """`edit` (checkpoint dict -> None) applied to run/checkpoints/final.pt, saved again."""
    final = run / "checkpoints" / "final.pt"
    ckpt = torch.load(final, weights_only=True)
    edit(ckpt)
    torch.save(ckpt, final)


def crafted_copy(run, tmp_path, edit):
    """A copy of `run` at tmp_path/run with its final.pt changed by `edit`."""
    dst = tmp_path / "run"
    shutil.copytree(run, dst)
    edit_final(dst, edit)
    return dst


def edit_rank_state(run, edit, rank=0):
    """`edit` (rank state dict -> None) applied to run/checkpoints/rank{rank}.pt, saved again."""
    part = run / "checkpoints" / f"rank{rank}.pt"
    state = torch.load(part, weights_only=True)
    edit(state)
    torch.save(state, part)
