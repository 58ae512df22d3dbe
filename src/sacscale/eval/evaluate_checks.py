"""What evaluate checks before loading torch and MuJoCo: which checkpoint it reads (a .pt
file, or a run folder's checkpoints/final.pt; CheckpointError names one it cannot read) and
whether one control step of its envs is too long to be deaf to a stop. Also how evaluate
and render read their inputs (checkpoint, --model): through the user's own and root's
symbolic links, never through another user's."""

from __future__ import annotations

import hashlib
import io
import os
import stat
import zipfile
from pathlib import Path

from sacscale.atomic import others_can_write_file, refuse_foreign_links
from sacscale.eval.protocol import COMMAND_GRID
from sacscale.sim.step_limits import envs_per_cpu_problem

CHECKPOINT_IN_RUN = Path("checkpoints") / "final.pt"


class CheckpointError(ValueError):
    """The checkpoint is missing or is not one this evaluation can run."""


def foreign_link_problem(path: str | Path) -> str | None:
    """Why `path` may not be read: it is, or is reached through, another user's symbolic
    link (root reading through it would show a file only root may read, at that user's
    choosing); None otherwise. Our own and root's links are followed."""
    try:
        refuse_foreign_links(path, reading=True)
    except OSError as exc:
        where = "" if exc.filename == str(path) else f"reached through {exc.filename}, "
        return f"{where}{exc.strerror}: give a path of your own"
    return None


def _refuse_foreign(path: Path) -> None:
    if problem := foreign_link_problem(path):
        raise CheckpointError(f"{path}: {problem}")


def refuse_foreign_checkpoint(path: str | Path) -> None:
    """CheckpointError where CHECKPOINT_OR_RUN, or the final.pt of the run folder it names,
    is or is reached through another user's symbolic link: judged before anything in it
    (the run's own records) is read."""
    path = Path(path)
    _refuse_foreign(path)
    if path.is_dir():
        _refuse_foreign(path / CHECKPOINT_IN_RUN)


def resolve_checkpoint(path: str | Path) -> Path:
    """A .pt file, or a run directory holding checkpoints/final.pt; CheckpointError for one
    reached through another user's symbolic link (see refuse_foreign_checkpoint)."""
    refuse_foreign_checkpoint(path)
    path = Path(path)
    if path.is_dir():
        path = path / CHECKPOINT_IN_RUN
    if not path.is_file():
        what = _not_a_file(path) or "no such checkpoint file" + _moved_policy_hint(path)
        raise CheckpointError(f"{path}: {what}")
    return path


def _moved_policy_hint(path: Path) -> str:
    """Where the pipeline's manifest stage put a run's policy that the set does not keep
    (results/<set>/runs/<run>/checkpoints/final.pt -> logs/<set>/left_out/<run>/final.pt),
    if it stands there; else ""."""
    parts = path.parts
    if len(parts) < 6 or parts[-6] != "results" or parts[-4] != "runs" or parts[-2:] != CHECKPOINT_IN_RUN.parts:
        return ""
    moved = Path(*parts[:-6], "logs", parts[-5], "left_out", parts[-3], "final.pt")
    if not moved.is_file():
        return ""
    return (f"; the pipeline keeps only the policies a claim rests on in the set and moved this run's to "
            f"{moved}")


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


# The most a checkpoint of this trainer may weigh: final.pt holds the policy, the networks and
# their AdamW moments, never the replay buffer (0.9 to 1.8 MB measured, 19 MB the largest
# seen). A file far above that is refused before it is read: read whole, a file of many GB
# took minutes and most of the machine's memory before it was judged.
MAX_CHECKPOINT_BYTES = 2**30
# a compiled task model (.mjb) is some 80 kB, its MJCF some 40 kB
MAX_MODEL_BYTES = 256 * 2**20
ZIP_SIGNATURE = b"PK\x03\x04"  # how torch's checkpoint format (a zip archive) begins


def read_input(path: str | Path, what: str = "checkpoint", own_file_for: str | None = None) -> bytes:
    """The bytes of the input file `path` (a checkpoint; a model with `what="model"`):
    followed through our own links, never another user's (CheckpointError). Checked again
    once open, so a link of theirs put on the way meanwhile is refused too, and the bytes
    are the file named. One larger than its bound (MAX_CHECKPOINT_BYTES, MAX_MODEL_BYTES),
    or a checkpoint that does not begin as a zip archive, is refused unread. With
    `own_file_for` (why it matters, for the message), a file another user owns or may write
    is refused too, judged on the file opened, so one swapped in at its name cannot pass."""
    path = Path(path)
    _refuse_foreign(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise CheckpointError(f"{path}: cannot read it ({exc.strerror})") from None
    with os.fdopen(fd, "rb") as fh:
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode):
            raise CheckpointError(f"{path}: not a plain file")
        if own_file_for and (problem := others_can_write_file(opened, f"/proc/self/fd/{fd}")):
            raise CheckpointError(f"{path}: {problem}; {own_file_for}: use a copy of your own, closed to others "
                                  "(chmod go-w)")
        _refuse_foreign(path)
        try:
            named = path.stat()
        except OSError:
            named = None
        if named is None or (named.st_dev, named.st_ino) != (opened.st_dev, opened.st_ino):
            raise CheckpointError(f"{path}: replaced while it was opened; run again")
        os.set_blocking(fd, True)
        _refuse_unread(fd, path, opened.st_size, what)
        data = fh.read(_bound(what) + 1)
        if problem := size_problem(len(data), what) or (what == "checkpoint" and archive_problem(data)):
            raise CheckpointError(f"{path}: {problem}")  # grown since it was judged, or inflating past it
        return data


def archive_problem(data: bytes) -> str | None:
    """Why a checkpoint's bytes are refused before torch inflates them, or None. torch.save
    stores every record as it is; torch.load inflates a compressed one to the size its zip
    entry declares, whatever the file weighs (3 MB declaring 3 GiB took a minute and 3.4 GB)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            records = archive.infolist()
    except Exception as exc:  # noqa: BLE001 - any archive that zipfile cannot list is not torch's
        return f"not a readable torch checkpoint ({type(exc).__name__}: {exc})"
    packed = next((r for r in records if r.compress_type != zipfile.ZIP_STORED), None)
    if packed is not None:
        return (f"not a readable torch checkpoint (its record {packed.filename[:80]!r} is compressed; torch "
                "stores every record as it is): refused unread")
    declared = sum(r.file_size for r in records)
    if declared > MAX_CHECKPOINT_BYTES:
        return (f"not a readable torch checkpoint (its records would inflate to {declared:,} bytes, more than "
                f"any checkpoint of this trainer weighs: the bound is {MAX_CHECKPOINT_BYTES:,} bytes): refused unread")
    return None


def _bound(what: str) -> int:
    return MAX_MODEL_BYTES if what == "model" else MAX_CHECKPOINT_BYTES


def size_problem(size: int, what: str = "checkpoint") -> str | None:
    """Why a `what` (checkpoint, model) file of `size` bytes is refused unread, or None."""
    limit = _bound(what)
    if size <= limit:
        return None
    return (f"{size:,} bytes, more than any {what} of this trainer weighs (the bound is {limit:,} bytes, "
            f"{limit // 2**20:,} MiB): refused unread")


def _refuse_unread(fd: int, path: Path, size: int, what: str) -> None:
    if problem := size_problem(size, what):
        raise CheckpointError(f"{path}: {problem}")
    try:
        begins = os.pread(fd, len(ZIP_SIGNATURE), 0)
    except OSError as exc:
        raise CheckpointError(f"{path}: cannot read it ({exc.strerror})") from None
    if what == "checkpoint" and begins != ZIP_SIGNATURE:
        raise CheckpointError(f"{path}: not a readable torch checkpoint (it does not begin as torch's zip format "
                              "does): refused unread")


def input_sha256(path: str | Path) -> str:
    """SHA-256 of an input file read as read_input reads it."""
    return hashlib.sha256(read_input(path)).hexdigest()


def batch_problem(envs_per_command: int, threads: int) -> str | None:
    """Why one control step of the evaluation is too long to be deaf to a stop, or None:
    every command's envs step together, in one MuJoCo call on `threads` threads."""
    num_envs = len(COMMAND_GRID) * envs_per_command
    given = f"--envs-per-command {envs_per_command} ({len(COMMAND_GRID)} commands: {num_envs} envs stepped together)"
    return envs_per_cpu_problem(num_envs, threads, len(os.sched_getaffinity(0)), given)
