"""What the crafted-resume tests share: a run's final.pt changed in place, and a copy of a
run whose final.pt is changed."""

import shutil

import torch


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
