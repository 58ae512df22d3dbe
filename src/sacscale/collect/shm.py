"""Shared-memory blocks between a rank's learner and its collector process.

Two kinds of block, both plain numpy views over one shared mapping each:

* `TransitionSlots`: a double buffer of one env step of all envs (the collector fills
  slot k while the learner drains slot 1-k), with a small float64 stats vector per slot.
* `WeightBlock`: the actor's flat parameters plus a sequence counter (a seqlock: odd
  while the learner writes, even when stable), so the collector never reads a torn copy.

No block outlives its processes: the learner creates the block's file in /dev/shm
(`<prefix>_<what>_<random>`, the prefix holds the creator's pid), unlinks it at once and keeps
only the descriptor, which the spawned collector inherits when the block is pickled for
it. The kernel frees the memory with the last mapping, however the processes end
(SIGKILL of the whole group included). The space is reserved up front (fallocate), so a
full /dev/shm is a named error at creation instead of a SIGBUS later.

`Signal` (a counting semaphore) and `Flag` (a one-way event) are pipes, for the same
reason: named POSIX semaphores outlive a killed process.
"""

from __future__ import annotations

import errno
import glob
import mmap
import os
import re
import secrets
import select
import shutil
import stat
import time
from dataclasses import dataclass
from multiprocessing.reduction import DupFd

import numpy as np

from sacscale.task.terms import REWARD_TERMS

SHM_DIR = "/dev/shm"


class SharedMemoryError(RuntimeError):
    """A shared-memory block could not be created (e.g. /dev/shm is full)."""


# Per-slot statistics written by the collector, read by the learner (float64 vector).
# reward_<term>: the term's weighted share of the step's mean reward; reward_raw_<term>:
# the unweighted term's mean over envs (both means over all of the slot's envs)
STAT_FIELDS = (
    "episode_return_sum",
    "episode_length_sum",
    "episode_count",
    "falls",
    "penalty_scale",
    "curriculum_mean_length",
    *(f"reward_{t}" for t in REWARD_TERMS),
    *(f"reward_raw_{t}" for t in REWARD_TERMS),
    "sim_errors",
    "env_step_ms",
    "action_select_ms",
    "replay_write_ms",
    "weight_sync_ms",
    "physics_ms",
    "physics_wait_ms",
    "weights_version",
)
STAT_INDEX = {name: i for i, name in enumerate(STAT_FIELDS)}


def transition_fields(num_envs: int, actor_dim: int, critic_dim: int, act_dim: int) -> dict[str, tuple]:
    """Shapes of one slot's arrays (all float32; `terminated` as 0/1 float)."""
    return {
        "actor_obs": (num_envs, actor_dim),
        "critic_obs": (num_envs, critic_dim),
        "action": (num_envs, act_dim),
        "reward": (num_envs,),
        "next_actor_obs": (num_envs, actor_dim),
        "next_critic_obs": (num_envs, critic_dim),
        "terminated": (num_envs,),
    }


def shm_free_bytes() -> int:
    try:
        return shutil.disk_usage(SHM_DIR).free
    except OSError:
        return 0


def _new_file(name: str) -> int:
    """A new file `<name>_<random>` in /dev/shm, unlinked at once; its descriptor. The random
    part keeps another local user from planting the name in advance (it can be guessed
    from the pid, or read off the rank's other block): a name taken is tried again."""
    for _ in range(8):
        path = os.path.join(SHM_DIR, f"{name}_{secrets.token_hex(8)}")
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except FileExistsError:
            continue
        os.unlink(path)  # the name exists for microseconds: nothing can leak it
        return fd
    raise SharedMemoryError(f"block {name}: every name tried in {SHM_DIR} was taken (by another user?)")


def _create_fd(name: str, size: int) -> int:
    """An unlinked /dev/shm file of `size` bytes, reserved; returns its descriptor."""
    fd = _new_file(name)
    try:
        os.posix_fallocate(fd, 0, max(size, 1))
    except OSError as exc:
        os.close(fd)
        if exc.errno in (errno.ENOSPC, errno.ENOMEM, errno.EFBIG):
            raise SharedMemoryError(
                f"not enough shared memory for block {name}: {size / 2**20:.1f} MB needed, "
                f"{shm_free_bytes() / 2**20:.1f} MB free in {SHM_DIR} (fewer --num-envs, or a larger {SHM_DIR})"
            ) from exc
        raise
    return fd


def _rebuild(cls, name: str, args: tuple, dupfd):
    """Unpickling in the collector: map the inherited descriptor."""
    return cls(name, *args, fd=dupfd.detach())


class _Block:
    """One shared block: created (and unlinked at once) by its owner, mapped from an
    inherited descriptor elsewhere. A subclass gives `_size(*args)` (bytes) and
    `_views(*args)` (its numpy views of `buf`) for its constructor's arguments."""

    def __init__(self, name: str, *args, fd: int | None = None):
        self.name, self._ctor_args = name, args
        self.size = self._size(*args)
        self.owner = fd is None
        self._fd = _create_fd(name, self.size) if fd is None else fd
        self._mm = mmap.mmap(self._fd, max(self.size, 1))
        self._views(*args)

    def __reduce__(self):
        # the descriptor travels with the pickle (spawn passes it to the child)
        return _rebuild, (type(self), self.name, self._ctor_args, DupFd(self._fd))

    def attach_copy(self):
        """A second mapping of the same memory (as the collector gets), for tests."""
        return type(self)(self.name, *self._ctor_args, fd=os.dup(self._fd))

    @property
    def buf(self):
        return memoryview(self._mm)

    def close(self) -> None:
        """Drop the mapping and the descriptor (nothing to unlink: the name is gone)."""
        mm, self._mm = getattr(self, "_mm", None), None
        if mm is not None:
            try:
                mm.close()
            except BufferError:
                pass  # a numpy view is still alive; the mapping goes with the process
        fd, self._fd = getattr(self, "_fd", -1), -1
        if fd >= 0:
            os.close(fd)


def _carve(buf, layout: dict[str, tuple], dtype, offset: int = 0) -> tuple[dict[str, np.ndarray], int]:
    views = {}
    for key, shape in layout.items():
        n = int(np.prod(shape))
        views[key] = np.ndarray(shape, dtype=dtype, buffer=buf, offset=offset)
        offset += n * np.dtype(dtype).itemsize
    return views, offset


@dataclass(frozen=True)
class SlotSpec:
    num_envs: int
    actor_dim: int
    critic_dim: int
    act_dim: int

    @property
    def layout(self) -> dict[str, tuple]:
        return transition_fields(self.num_envs, self.actor_dim, self.critic_dim, self.act_dim)

    @property
    def floats_per_slot(self) -> int:
        return sum(int(np.prod(s)) for s in self.layout.values())

    @property
    def bytes_per_slot(self) -> int:
        return 4 * self.floats_per_slot + 8 * len(STAT_FIELDS)


class TransitionSlots(_Block):
    """Double-buffered transitions: `slots[k][field]` numpy views, `stats[k]` float64."""

    NUM_SLOTS = 2

    def _size(self, spec: SlotSpec) -> int:
        return self.NUM_SLOTS * spec.bytes_per_slot

    def _views(self, spec: SlotSpec) -> None:
        self.spec = spec
        self.slots: list[dict[str, np.ndarray]] = []
        self.stats: list[np.ndarray] = []
        offset = 0
        for _ in range(self.NUM_SLOTS):
            views, offset = _carve(self.buf, spec.layout, np.float32, offset)
            self.slots.append(views)
            stats, offset = _carve(self.buf, {"s": (len(STAT_FIELDS),)}, np.float64, offset)
            self.stats.append(stats["s"])

    def close(self) -> None:
        self.slots, self.stats = [], []
        super().close()


class WeightBlock(_Block):
    """Flat actor weights with a seqlock counter (single writer: the learner)."""

    def __init__(self, name: str, numel: int, fd: int | None = None):
        super().__init__(name, int(numel), fd=fd)
        if self.owner:
            self.seq[0] = 0

    def _size(self, numel: int) -> int:
        return 8 + 4 * numel

    def _views(self, numel: int) -> None:
        self.seq = np.ndarray((1,), dtype=np.int64, buffer=self.buf, offset=0)
        self.flat = np.ndarray((numel,), dtype=np.float32, buffer=self.buf, offset=8)

    def publish(self, weights: np.ndarray) -> int:
        """Write new weights; returns the new version (seq // 2)."""
        self.seq[0] += 1  # odd: write in progress
        np.copyto(self.flat, weights, casting="no")
        self.seq[0] += 1  # even: stable
        return int(self.seq[0]) // 2

    def version(self) -> int:
        return int(self.seq[0]) // 2

    def read_into(self, out: np.ndarray, timeout_s: float = 30.0, give_up=None) -> int:
        """Copy a consistent snapshot into `out`; returns its version.

        A writer preempted mid-copy keeps the counter odd for as long as the scheduler
        parks it (on a loaded 2-core machine, many milliseconds), so retries back off
        with short sleeps and give up only after `timeout_s`, or as soon as `give_up()`
        is true (the collector's stop request: a dead writer never finishes).
        """
        deadline = time.monotonic() + timeout_s
        pause = 0.0
        while True:
            before = int(self.seq[0])
            if before % 2 == 0:
                np.copyto(out, self.flat)
                if int(self.seq[0]) == before:
                    return before // 2
            if give_up is not None and give_up():
                raise InterruptedError(f"weight block {self.name}: gave up waiting for a consistent snapshot")
            if time.monotonic() > deadline:
                raise RuntimeError(f"weight block {self.name}: no consistent snapshot within {timeout_s:.0f} s "
                                   "(is the learner stuck mid-write?)")
            time.sleep(pause)
            pause = min(0.01, pause * 2 or 1e-5)

    def close(self) -> None:
        self.seq = self.flat = None
        super().close()


class Signal:
    """A counting semaphore between two processes, made of a pipe (one byte per count):
    nothing named, so nothing is left when its processes die. Pickles with its
    descriptors for a spawned child."""

    def __init__(self, value: int = 0):
        self._r, self._w = os.pipe()
        os.set_blocking(self._w, False)
        for _ in range(value):
            self.release()

    def release(self) -> None:
        os.write(self._w, b"\x01")

    def acquire(self, timeout: float) -> bool:
        """Take one count, waiting at most `timeout` s; False when none came."""
        ready, _, _ = select.select([self._r], [], [], timeout)
        if not ready:
            return False
        os.read(self._r, 1)  # single reader: a readable pipe holds at least one byte
        return True

    def __reduce__(self):
        return _rebuild_pipe, (type(self), DupFd(self._r), DupFd(self._w))

    def close(self) -> None:
        for fd in (self._r, self._w):
            try:
                os.close(fd)
            except OSError:
                pass
        self._r = self._w = -1


class Flag(Signal):
    """A one-way event: `set()` once, `is_set()` from either side (never consumed)."""

    def __init__(self):
        super().__init__(0)

    def set(self) -> None:
        if not self.is_set():
            self.release()

    def is_set(self) -> bool:
        return bool(select.select([self._r], [], [], 0)[0])


def _rebuild_pipe(cls, r, w):
    obj = cls.__new__(cls)
    obj._r, obj._w = r.detach(), w.detach()
    return obj


_NAME = re.compile(r"^sacscale_(\d+)_[0-9a-f]{6}_")
# a block's name after its job's prefix: the rank's part, its kind and the random part _new_file gives it
_BLOCK = re.compile(r"(?:_r\d+)?_(?:slots|weights)_[0-9a-f]{16}")


def clean_stale(directory: str = SHM_DIR) -> list[str]:
    """Remove `sacscale_<pid>_<token>_*` entries whose creator is provably gone: no such
    pid, and no process we can see maps or holds the file. (Blocks are unlinked
    microseconds after creation, so only a SIGKILL in that window leaves one; older
    versions kept them named for the whole run.) Entries of live processes, and anything
    not named this way (e.g. other programs' semaphores), are never touched; nor are another
    user's (root could remove them; their pid may be of another PID namespace)."""
    candidates = {}
    for path in glob.glob(os.path.join(directory, "sacscale_*")):
        m = _NAME.match(os.path.basename(path))
        if m and not os.path.exists(f"/proc/{m.group(1)}") and _ours(path):
            candidates[os.path.realpath(path)] = path
    if not candidates:
        return []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            # any process's mapped file names, undecodable bytes kept as realpath keeps them
            with open(f"/proc/{entry}/maps", encoding="utf-8", errors="surrogateescape") as fh:
                for line in fh:
                    candidates.pop(line.rstrip().rpartition(" ")[2], None)
            for fd in os.listdir(f"/proc/{entry}/fd"):
                candidates.pop(os.readlink(f"/proc/{entry}/fd/{fd}"), None)
        except OSError:
            continue
    return _unlink(candidates.values())


def _ours(path: str) -> bool:
    try:
        return os.lstat(path).st_uid == os.getuid()
    except OSError:
        return False


def _our_block(path: str, prefix: str) -> bool:
    """A regular file of this user named as this module names the blocks of `prefix` (a job's
    or one rank's: rank 1's is not rank 10's): another user can watch /dev/shm, learn a run's
    prefix and put a file of hers under it."""
    name = os.path.basename(path)
    if not (name.startswith(prefix) and _BLOCK.fullmatch(name[len(prefix):])):
        return False
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and st.st_uid == os.getuid()


def _unlink(paths) -> list[str]:
    """Unlink each path that can be; the names of those removed."""
    removed = []
    for path in paths:
        try:
            os.unlink(path)
            removed.append(os.path.basename(path))
        except OSError:  # gone meanwhile, or not ours to remove
            pass
    return removed


def unlink_prefix(prefix: str) -> list[str]:
    """Remove this user's blocks in /dev/shm whose name starts with `prefix` (a block whose
    creator was killed between creating and unlinking it); nothing else there."""
    return _unlink(p for p in glob.glob(os.path.join(SHM_DIR, f"{glob.escape(prefix)}*")) if _our_block(p, prefix))
