"""Shared-memory blocks between a rank's learner and its collector process.

Two kinds of block, both plain numpy views over `multiprocessing.shared_memory`:

* `TransitionSlots`: a double buffer of one env step of all envs (the collector fills
  slot k while the learner drains slot 1-k), with a small float64 stats vector per slot.
* `WeightBlock`: the actor's flat parameters plus a sequence counter (a seqlock: odd
  while the learner writes, even when stable), so the collector never reads a torn copy.

Blocks are named `<prefix>_<what>` with a per-job prefix, so a supervisor can unlink
anything a killed process left behind (`unlink_prefix`).
"""

from __future__ import annotations

import glob
import os
import time
from dataclasses import dataclass
from multiprocessing import shared_memory

import numpy as np

from sacscale.task.terms import REWARD_TERMS

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


def _attach(name: str, size: int, create: bool) -> shared_memory.SharedMemory:
    # The collector is spawned, so it shares its learner's resource tracker: the block is
    # tracked once, by name, and unlinked by its creator (or by unlink_prefix after a crash).
    if create:
        return shared_memory.SharedMemory(name=name, create=True, size=size)
    return shared_memory.SharedMemory(name=name, create=False)


class _Block:
    def __init__(self, name: str, size: int, create: bool):
        self.name = name
        self.owner = create
        self._shm = _attach(name, size, create)

    @property
    def buf(self):
        return self._shm.buf

    def close(self) -> None:
        """Drop the mapping (and unlink the block if this side created it)."""
        if self._shm is None:
            return
        shm, self._shm = self._shm, None
        try:
            shm.close()
        except BufferError:
            pass  # a numpy view is still alive; the mapping goes with the process
        if self.owner:
            try:
                shm.unlink()
            except FileNotFoundError:
                pass


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

    def __init__(self, name: str, spec: SlotSpec, create: bool):
        super().__init__(name, self.NUM_SLOTS * spec.bytes_per_slot, create)
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

    def __init__(self, name: str, numel: int, create: bool):
        super().__init__(name, 8 + 4 * numel, create)
        self.seq = np.ndarray((1,), dtype=np.int64, buffer=self.buf, offset=0)
        self.flat = np.ndarray((numel,), dtype=np.float32, buffer=self.buf, offset=8)
        if create:
            self.seq[0] = 0

    def publish(self, weights: np.ndarray) -> int:
        """Write new weights; returns the new version (seq // 2)."""
        self.seq[0] += 1  # odd: write in progress
        np.copyto(self.flat, weights, casting="no")
        self.seq[0] += 1  # even: stable
        return int(self.seq[0]) // 2

    def version(self) -> int:
        return int(self.seq[0]) // 2

    def read_into(self, out: np.ndarray, timeout_s: float = 30.0) -> int:
        """Copy a consistent snapshot into `out`; returns its version.

        A writer preempted mid-copy keeps the counter odd for as long as the scheduler
        parks it (on a loaded 2-core machine, many milliseconds), so retries back off
        with short sleeps and give up only after `timeout_s`.
        """
        deadline = time.monotonic() + timeout_s
        pause = 0.0
        while True:
            before = int(self.seq[0])
            if before % 2 == 0:
                np.copyto(out, self.flat)
                if int(self.seq[0]) == before:
                    return before // 2
            if time.monotonic() > deadline:
                raise RuntimeError(f"weight block {self.name}: no consistent snapshot within {timeout_s:.0f} s "
                                   "(is the learner stuck mid-write?)")
            time.sleep(pause)
            pause = min(0.01, pause * 2 or 1e-5)

    def close(self) -> None:
        self.seq = self.flat = None
        super().close()


def unlink_prefix(prefix: str) -> list[str]:
    """Remove every /dev/shm block whose name starts with `prefix` (cleanup after a crash)."""
    removed = []
    for path in glob.glob(f"/dev/shm/{prefix}*"):
        try:
            os.unlink(path)
            removed.append(os.path.basename(path))
        except FileNotFoundError:
            pass
    return removed
