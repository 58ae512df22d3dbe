"""What evaluate checks before loading torch and MuJoCo: which checkpoint it reads (a .pt
file, or a run folder's checkpoints/final.pt; CheckpointError names one it cannot read) and
whether one control step of its envs is too long to be deaf to a stop."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from sacscale.eval.protocol import COMMAND_GRID
from sacscale.sim.step_limits import envs_per_cpu_problem

CHECKPOINT_IN_RUN = Path("checkpoints") / "final.pt"


class CheckpointError(ValueError):
    """The checkpoint is missing or is not one this evaluation can run."""


def resolve_checkpoint(path: str | Path) -> Path:
    """A .pt file, or a run directory holding checkpoints/final.pt."""
    path = Path(path)
    if path.is_dir():
        path = path / CHECKPOINT_IN_RUN
    if not path.is_file():
        what = _not_a_file(path)
        raise CheckpointError(f"{path}: {what}" if what else f"{path}: no such checkpoint file")
    return path


def _not_a_file(path: Path) -> str | None:
    """What `path` is when it exists but is no plain file (a FIFO, a device...), else None."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return None
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device")):
        if test(mode):
            return f"not a plain file ({name}), not a checkpoint"
    return None


def batch_problem(envs_per_command: int, threads: int) -> str | None:
    """Why one control step of the evaluation is too long to be deaf to a stop, or None:
    every command's envs step together, in one MuJoCo call on `threads` threads."""
    num_envs = len(COMMAND_GRID) * envs_per_command
    given = f"--envs-per-command {envs_per_command} ({len(COMMAND_GRID)} commands: {num_envs} envs stepped together)"
    return envs_per_cpu_problem(num_envs, threads, len(os.sched_getaffinity(0)), given)
