"""CPU lists and thread pinning for the simulation thread pool.

On Linux, `os.sched_setaffinity(0, cpus)` sets the mask of the *calling thread* only
(pid 0 means "this task"), and a new thread starts with the mask of the thread that
creates it. `mujoco.batch.Batch` creates its `nthread - 1` worker threads in its
constructor (checked: they appear in /proc/self/task as soon as `Batch(...)` returns,
with the creator's mask at that moment; the calling thread is the remaining worker of
every call). So pinning the creating thread around the constructor pins the pool,
and restoring the mask afterwards leaves the creating thread (the learner, say) as it was.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator
from pathlib import Path

# The Linux kernel supports at most 8192 CPUs (NR_CPUS): a range past it is a typo, and
# "0-4000000000" would otherwise expand to four billion ids before anything could refuse it.
MAX_CPU_ID = 8191


class CpuRangeError(ValueError):
    """A reversed range, or one past the highest CPU id; `part` is the offending item."""

    def __init__(self, message: str, part: str):
        super().__init__(message)
        self.part = part


def parse_cpu_list(spec: str | Iterable[int], max_id: int = MAX_CPU_ID) -> list[int]:
    """"8-39,48-79" -> [8, ..., 39, 48, ..., 79]; a list of ints passes through.

    The result is sorted and duplicate-free. Raises ValueError on malformed text, and
    CpuRangeError (a ValueError) on a range that is reversed or goes past `max_id`,
    checked before the range is expanded.
    """
    if isinstance(spec, str):
        return _parse_cpu_text(spec, max_id)
    out = set()
    for c in spec:
        if isinstance(c, bool) or int(c) != c or int(c) < 0:
            raise ValueError(f"bad CPU id {c!r}")
        out.add(int(c))
    if not out:
        raise ValueError("empty CPU list")
    return sorted(out)


def _parse_cpu_text(spec: str, max_id: int) -> list[int]:
    text = spec.strip()
    if not text:
        raise ValueError("empty CPU list")
    cpus: set[int] = set()
    for part in text.split(","):
        lo, hi = _cpu_range(part.strip(), spec, max_id)
        cpus.update(range(lo, hi + 1))
    return sorted(cpus)


def named_twice(spec: str, max_id: int = MAX_CPU_ID) -> list[int]:
    """The CPUs a CPU list names more than once ("0-1,1": [1]). The list parses to each CPU
    once, so an option's text that repeats one is a slip (another CPU meant?), not a setting."""
    seen: set[int] = set()
    twice: set[int] = set()
    for part in spec.split(","):
        lo, hi = _cpu_range(part.strip(), spec, max_id)
        ids = set(range(lo, hi + 1))
        twice |= seen & ids
        seen |= ids
    return sorted(twice)


def whole_number(text: str) -> int:
    """A number as the kernel, lscpu and nvidia-smi write one: ASCII digits only. int() also
    reads `1_0` as 10, `+1`, ` 1` and digits of other scripts (`\u0661` as 1), which name a
    CPU that taskset and the kernel's lists do not."""
    if not (text.isascii() and text.isdigit()):
        raise ValueError(f"not a whole number: {text!r}")
    return int(text)


def _cpu_range(part: str, spec: str, max_id: int) -> tuple[int, int]:
    """One item of a CPU list ("5" or "8-39") as (low, high), bounds checked."""
    if not part:
        raise ValueError(f"empty item in CPU list {spec!r}")
    lo_s, sep, hi_s = part.partition("-")
    try:
        lo = whole_number(lo_s)
        hi = whole_number(hi_s) if sep else lo
    except ValueError:
        raise ValueError(f"bad CPU list item {part!r} in {spec!r}") from None
    if lo < 0 or hi < lo:
        raise CpuRangeError(f"bad CPU range {part!r} in {spec!r}", part)
    if hi > max_id:
        raise CpuRangeError(f"CPU range {part!r} in {spec!r} goes past CPU {max_id}", part)
    return lo, hi


def format_cpu_list(cpus: Iterable[int]) -> str:
    """[0, 1, 2, 5] -> "0-2,5" (the kernel's Cpus_allowed_list format)."""
    ids = sorted(set(cpus))
    parts = []
    i = 0
    while i < len(ids):
        j = i
        while j + 1 < len(ids) and ids[j + 1] == ids[j] + 1:
            j += 1
        parts.append(str(ids[i]) if i == j else f"{ids[i]}-{ids[j]}")
        i = j + 1
    return ",".join(parts)


def available_cpus() -> set[int]:
    """CPUs this process may run on (its affinity mask, which respects cgroups/taskset)."""
    return set(os.sched_getaffinity(0))


def validate_cpu_ids(ids: str | Iterable[int]) -> list[int]:
    """Parse ids and check every CPU exists and is allowed; ValueError names the bad ones."""
    cpus = parse_cpu_list(ids)
    allowed = available_cpus()
    bad = [c for c in cpus if c not in allowed]
    if bad:
        raise ValueError(
            f"CPU(s) {format_cpu_list(bad)} not available: this process may run on "
            f"{format_cpu_list(allowed)} (os.cpu_count()={os.cpu_count()})"
        )
    return cpus


@contextlib.contextmanager
def pinned_thread(cpu_ids: str | Iterable[int] | None) -> Iterator[list[int] | None]:
    """Pin the calling thread to cpu_ids for the block, then restore its previous mask.

    Threads started inside the block inherit the pinned mask and keep it. None: no-op.
    """
    if cpu_ids is None:
        yield None
        return
    cpus = validate_cpu_ids(cpu_ids)
    previous = os.sched_getaffinity(0)
    os.sched_setaffinity(0, cpus)
    try:
        yield cpus
    finally:
        os.sched_setaffinity(0, previous)


def thread_affinities() -> dict[int, list[int]]:
    """{native thread id: allowed CPUs} for every thread of this process (Linux /proc)."""
    out = {}
    for status in Path("/proc/self/task").glob("*/status"):
        try:
            text = status.read_text(encoding="utf-8")
        except FileNotFoundError:  # the thread ended while we listed
            continue
        for line in text.splitlines():
            if line.startswith("Cpus_allowed_list:"):
                out[int(status.parent.name)] = parse_cpu_list(line.split(":", 1)[1])
    return out


def pin_process(cpu_ids: Iterable[int]) -> list[int]:
    """Pin every thread of this process, and so every thread it starts later, to cpu_ids.

    sched_setaffinity(0) moves only the calling thread; threads started earlier (CUDA's,
    NCCL's, torch's intra-op pool) keep their mask unless each one is moved too.
    """
    cpus = validate_cpu_ids(cpu_ids)
    moved: set[int] = set()
    while True:  # again until no new thread appears: one not yet moved may have started one
        tids = {int(task.name) for task in Path("/proc/self/task").iterdir()} - moved
        if not tids:
            return cpus
        for tid in tids:
            try:
                os.sched_setaffinity(tid, cpus)
            except (ProcessLookupError, FileNotFoundError):  # the thread ended while we listed
                pass
        moved |= tids


def first_overlap(pools: list[list[int]]) -> tuple[int, int, list[int]] | None:
    """The first pair of pools (by index) that share CPUs, with those CPUs; None if disjoint."""
    for a in range(len(pools)):
        for b in range(a + 1, len(pools)):
            shared = sorted(set(pools[a]) & set(pools[b]))
            if shared:
                return a, b, shared
    return None
