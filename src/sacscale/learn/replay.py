"""Ring replay buffer of plain preallocated tensors on the learner's device.

All seven fields live as column blocks of ONE (capacity, row_dim) float32 tensor, so a
batch is gathered with a single `index_select`; `actor_obs`, `critic_obs`, ... are
views of that storage. Transitions can be added field by field (`add`) or as packed
rows in the same layout (`add_packed`, one copy; the collector can write that layout
into shared memory). Sources may be pinned CPU tensors: the copies are then
non-blocking, and `wait_for_copies()` tells when the sources may be overwritten.

`size` is a Python int kept on the host (no sync to read); `size_t` is its copy on the
device, which in-graph sampling uses (`randint % size_t`), so a captured CUDA graph sees
the buffer grow without any host branch.

Non-finite transitions are dropped where they enter: every written row is checked on
the device right after its copy (stream-ordered, no host sync), and a row with any NaN
or inf is marked invalid in `valid` and never sampled (`usable()` sends draws of it to
a valid row). `nonfinite_rows` counts them and `first_nonfinite` remembers the first
one (which add, which source row, which fields), both on the device: read them at log
time only (`nonfinite_count()`, `describe_first_nonfinite()`: host syncs).
"""

from __future__ import annotations

import torch

FIELDS = ("actor_obs", "critic_obs", "action", "reward", "next_actor_obs", "next_critic_obs", "terminated")
SCALAR_FIELDS = ("reward", "terminated")


def transition_layout(actor_obs_dim: int, critic_obs_dim: int, action_dim: int) -> dict[str, slice]:
    """Column slices of each field in a packed transition row (float32)."""
    widths = {
        "actor_obs": actor_obs_dim, "critic_obs": critic_obs_dim, "action": action_dim,
        "reward": 1, "next_actor_obs": actor_obs_dim, "next_critic_obs": critic_obs_dim,
        "terminated": 1,
    }
    layout, start = {}, 0
    for name in FIELDS:
        layout[name] = slice(start, start + widths[name])
        start += widths[name]
    return layout


class ReplayBuffer:
    def __init__(self, capacity: int, actor_obs_dim: int, critic_obs_dim: int, action_dim: int,
                 device: torch.device | str) -> None:
        if capacity < 1:
            raise ValueError("replay capacity must be >= 1")
        self.capacity = int(capacity)
        self.device = torch.device(device)
        self.layout = transition_layout(actor_obs_dim, critic_obs_dim, action_dim)
        self.row_dim = self.layout["terminated"].stop
        self.storage = torch.zeros(self.capacity, self.row_dim, dtype=torch.float32, device=self.device)
        self.size = 0          # rows held (host)
        self.pos = 0           # next row to write (host)
        self.size_t = torch.zeros((), dtype=torch.int64, device=self.device)  # rows held (device)
        self._copy_event = None
        # Non-finite checks (device tensors, no host sync in add()):
        self.valid = torch.zeros(self.capacity, dtype=torch.bool, device=self.device)  # row holds a finite transition
        self.fallback = torch.zeros((), dtype=torch.int64, device=self.device)  # a valid row: where invalid draws go
        self.nonfinite_rows = torch.zeros((), dtype=torch.int64, device=self.device)  # rows dropped so far
        # the first dropped row: (add number from 0, source row = env index, bit k set: FIELDS[k] non-finite)
        self.first_nonfinite = torch.full((3,), -1, dtype=torch.int64, device=self.device)
        self.adds = 0  # add()/add_packed() calls so far (host)
        # column -> field one-hot, so one matmul turns per-column flags into per-field ones
        owner = torch.zeros(self.row_dim, len(FIELDS))
        for k, name in enumerate(FIELDS):
            owner[self.layout[name], k] = 1.0
        self._column_field = owner.to(self.device)
        self._field_bit = (2 ** torch.arange(len(FIELDS), dtype=torch.int64)).to(self.device)

    # --- field views of the storage ---
    def field(self, name: str) -> torch.Tensor:
        view = self.storage[:, self.layout[name]]
        return view[:, 0] if name in SCALAR_FIELDS else view

    actor_obs = property(lambda self: self.field("actor_obs"))
    critic_obs = property(lambda self: self.field("critic_obs"))
    action = property(lambda self: self.field("action"))
    reward = property(lambda self: self.field("reward"))
    next_actor_obs = property(lambda self: self.field("next_actor_obs"))
    next_critic_obs = property(lambda self: self.field("next_critic_obs"))
    terminated = property(lambda self: self.field("terminated"))

    def split(self, rows: torch.Tensor) -> dict[str, torch.Tensor]:
        """Field views of packed rows (B, row_dim): obs (B, dim), reward/terminated (B,)."""
        out = {}
        for name, cols in self.layout.items():
            out[name] = rows[:, cols.start] if name in SCALAR_FIELDS else rows[:, cols]
        return out

    def gather(self, indices: torch.Tensor) -> dict[str, torch.Tensor]:
        """The batch at `indices` (device int64), as field views of one gathered block."""
        return self.split(self.storage.index_select(0, indices))

    # --- writing ---
    def _segments(self, n: int) -> list[tuple[int, int, int]]:
        """(dst_row, src_row, length) pieces that write n new rows into the ring."""
        src = max(0, n - self.capacity)          # only the newest `capacity` rows survive
        dst = (self.pos + src) % self.capacity
        remaining, pieces = n - src, []
        while remaining:
            length = min(remaining, self.capacity - dst)
            pieces.append((dst, src, length))
            src, dst, remaining = src + length, (dst + length) % self.capacity, remaining - length
        return pieces

    def _check_written(self, n: int) -> None:
        """Mark the n rows just written valid or not, count and remember the non-finite
        ones; device ops only, ordered after the copies on the current stream."""
        for dst, src, length in self._segments(n):
            rows = self.storage[dst:dst + length]
            bad_fields = (~torch.isfinite(rows)).float() @ self._column_field > 0.5  # (length, fields)
            bad = bad_fields.any(1)
            self.valid[dst:dst + length] = ~bad
            any_bad = bad.any()
            first = bad.to(torch.int8).argmax()  # first bad row of the segment (0 if none)
            # index_select, not bad_fields[first]: indexing with a 0-d tensor would sync
            bits = (bad_fields.index_select(0, first.view(1))[0].long() * self._field_bit).sum()
            record = torch.stack([first.new_full((), self.adds), first + src, bits])
            unset = self.first_nonfinite[0] < 0
            self.first_nonfinite.copy_(torch.where(unset & any_bad, record, self.first_nonfinite))
            self.nonfinite_rows.add_(bad.sum())
        # keep the fallback on a valid row (the first one, should the last add have overwritten it)
        still_valid = self.valid.index_select(0, self.fallback.view(1))[0]
        self.fallback.copy_(torch.where(still_valid, self.fallback, self.valid.to(torch.int8).argmax()))
        self.adds += 1

    def usable(self, indices: torch.Tensor) -> torch.Tensor:
        """`indices` with every draw of an invalid (dropped) row replaced by a valid row.
        No host sync (graph-safe); the identity while no row was dropped."""
        return torch.where(self.valid[indices], indices, self.fallback)

    def nonfinite_count(self) -> int:
        """Rows dropped as non-finite so far (host sync: call at log time)."""
        return int(self.nonfinite_rows.item())

    def describe_first_nonfinite(self) -> dict | None:
        """The first dropped row: {'add', 'row', 'fields'} (host sync), or None."""
        add, row, bits = self.first_nonfinite.tolist()
        if add < 0:
            return None
        return {"add": add, "row": row, "fields": [name for k, name in enumerate(FIELDS) if bits >> k & 1]}

    def _advance(self, n: int, non_blocking: bool) -> None:
        self._check_written(n)
        self.pos = (self.pos + n) % self.capacity
        self.size = min(self.size + n, self.capacity)
        self.size_t.fill_(self.size)
        if non_blocking and self.device.type == "cuda":
            self._copy_event = torch.cuda.Event()
            self._copy_event.record()

    @staticmethod
    def _non_blocking(tensors) -> bool:
        return any(t.device.type == "cpu" and t.is_pinned() for t in tensors)

    def add(self, actor_obs, critic_obs, action, reward, next_actor_obs, next_critic_obs, terminated) -> None:
        """Append N transitions given field by field (tensors with N rows; terminated bool or float)."""
        values = dict(zip(FIELDS, (actor_obs, critic_obs, action, reward,
                                   next_actor_obs, next_critic_obs, terminated)))
        n = values["actor_obs"].shape[0]
        for name, value in values.items():
            width = self.layout[name].stop - self.layout[name].start
            if value.shape[0] != n or value.numel() != n * width:
                raise ValueError(f"replay field {name}: got shape {tuple(value.shape)}, "
                                 f"expected {n} rows of width {width}")
        non_blocking = self.device.type == "cuda" and self._non_blocking(values.values())
        for dst, src, length in self._segments(n):
            for name, value in values.items():
                self.storage[dst:dst + length, self.layout[name]].copy_(
                    value.reshape(n, -1)[src:src + length], non_blocking=non_blocking)
        self._advance(n, non_blocking)

    def add_packed(self, rows: torch.Tensor) -> None:
        """Append N transitions given as packed rows (N, row_dim) in `self.layout`."""
        if rows.dim() != 2 or rows.shape[1] != self.row_dim:
            raise ValueError(f"packed rows must be (N, {self.row_dim}), got {tuple(rows.shape)}")
        non_blocking = self.device.type == "cuda" and self._non_blocking([rows])
        for dst, src, length in self._segments(rows.shape[0]):
            self.storage[dst:dst + length].copy_(rows[src:src + length], non_blocking=non_blocking)
        self._advance(rows.shape[0], non_blocking)

    # --- checkpoints ---
    def state(self) -> dict:
        """The rows held and the write position, on the CPU."""
        return {"rows": self.storage[:self.size].to("cpu", copy=True), "pos": self.pos, "size": self.size,
                "capacity": self.capacity, "row_dim": self.row_dim}

    def load_state(self, state: dict) -> None:
        if (state["capacity"], state["row_dim"]) != (self.capacity, self.row_dim):
            raise ValueError(f"replay state of capacity {state['capacity']} x {state['row_dim']} columns does not "
                             f"fit this buffer ({self.capacity} x {self.row_dim})")
        size = int(state["size"])
        self.storage[:size].copy_(state["rows"])
        self.pos, self.size = int(state["pos"]), size
        self.size_t.fill_(size)
        # saved rows are checked again (checkpoints do not hold the flags); not counted
        self.valid.zero_()
        self.valid[:size] = torch.isfinite(self.storage[:size]).all(1)
        self.fallback.copy_(self.valid.to(torch.int8).argmax())

    def wait_for_copies(self) -> None:
        """Block until the last non-blocking copies from pinned memory have finished."""
        if self._copy_event is not None:
            self._copy_event.synchronize()
            self._copy_event = None


__all__ = ["ReplayBuffer", "transition_layout", "FIELDS"]
