"""Per-rank CPU pools for the collectors: parse, validate, or split automatically.

Accepted forms of `--collector-cpu-ids`:
  * `auto`: the CPUs this process may use, minus one CPU per learner process, split
    evenly between the ranks (no pinning at all when fewer than 2 CPUs per rank remain);
  * one CPU list for one rank, e.g. `8-39` (the seed's `env.cpu_ids`);
  * one list per rank separated by `;`, e.g. `8-39;48-79` (the seed's
    `dp_collector_cpu_ids=[[8..39],[48..79]]`).

`--learner-cpu-ids` (optional; by default the learner processes keep their affinity, as
in the seed): `auto` (the CPUs no pool uses, split evenly between the ranks) or one list
per rank separated by `;`, e.g. `0;16`. Learner CPUs may not overlap any pool.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from sacscale.cpus import first_overlap, format_cpu_list, named_twice, parse_cpu_list, validate_cpu_ids


class PoolError(ValueError):
    """A CPU pool specification that cannot be honoured."""


@dataclass
class PoolPlan:
    pools: list[list[int] | None]  # one per rank; None: not pinned
    learner_cpus: list[int]        # CPUs left to the learner processes (auto only, informative)
    how: str                       # a sentence for the run's metadata

    def as_dict(self) -> dict:
        return {"pools": self.pools, "learner_cpus": self.learner_cpus, "how": self.how}


def resolve_pools(spec: str | None, world_size: int) -> PoolPlan:
    spec = (spec or "auto").strip()
    if spec == "auto":
        return _auto(world_size)
    _lists_per_rank(spec, world_size, "--collector-cpu-ids", "the pools of")  # on this host, or PoolError
    return stated_pools(spec)


def stated_pools(spec: str | None) -> PoolPlan | None:
    """The plan an explicit `--collector-cpu-ids` gives, read without this host's CPUs (as
    verify reads a run made on another host); None for `auto`, which depends on the CPUs of
    the process that resolved it. A spec that does not parse: ValueError."""
    spec = (spec or "auto").strip()
    if spec == "auto":
        return None
    return PoolPlan([parse_cpu_list(part.strip()) for part in spec.split(";")], [], f"explicit: {spec}")


def _auto(world_size: int) -> PoolPlan:
    cpus = sorted(os.sched_getaffinity(0))
    learner = cpus[:world_size]
    rest = cpus[world_size:]
    per_rank = len(rest) // world_size
    if per_rank < 2:
        return PoolPlan(
            [None] * world_size,
            cpus,
            f"auto: only {len(cpus)} CPU(s) for {world_size} rank(s); collectors left unpinned",
        )
    pools = [rest[r * per_rank : (r + 1) * per_rank] for r in range(world_size)]
    return PoolPlan(
        pools,
        learner,
        f"auto: {len(cpus)} CPUs; {world_size} kept for the learner(s), {per_rank} per collector pool",
    )


def resolve_learner_cpus(spec: str | None, pools: list[list[int] | None]) -> list[list[int] | None]:
    """One CPU list per rank for its learner process, or None per rank (keep the affinity)."""
    world_size = len(pools)
    spec = (spec or "").strip()
    if not spec:
        return stated_learner_cpus(spec, world_size)
    pooled = {c for pool in pools if pool for c in pool}
    if spec == "auto":
        free = [c for c in sorted(os.sched_getaffinity(0)) if c not in pooled]
        per_rank = len(free) // world_size
        if per_rank < 1:
            raise PoolError(
                f"--learner-cpu-ids auto: {len(free)} CPU(s) outside the collector pools for "
                f"{world_size} learner(s); give the pools fewer CPUs or list the learner CPUs"
            )
        return [free[r * per_rank : (r + 1) * per_rank] for r in range(world_size)]
    _lists_per_rank(spec, world_size, "--learner-cpu-ids", "the learners of")  # on this host, or PoolError
    lists = stated_learner_cpus(spec, world_size)
    for rank, cpus in enumerate(lists):
        shared = sorted(set(cpus) & pooled)
        if shared:
            raise PoolError(f"--learner-cpu-ids, rank {rank}: CPUs {shared} are in a collector pool")
    return lists


def stated_learner_cpus(spec: str | None, world_size: int) -> list[list[int] | None] | None:
    """The learners' CPUs an empty or explicit `--learner-cpu-ids` gives, read without this
    host's CPUs; None for `auto` (the CPUs the resolving process found free)."""
    spec = (spec or "").strip()
    if not spec:
        return [None] * world_size
    if spec == "auto":
        return None
    return [parse_cpu_list(part.strip()) for part in spec.split(";")]


def _lists_per_rank(spec: str, world_size: int, flag: str, whose: str) -> list[list[int]]:
    """`a;b;...`: one valid, non-empty CPU list per rank, no two ranks sharing a CPU."""
    parts = [p.strip() for p in spec.split(";")]
    if len(parts) != world_size:
        raise PoolError(
            f"{flag}: {len(parts)} CPU list(s) given for {world_size} rank(s); "
            "give one list per rank separated by ';' (or 'auto')"
        )
    lists = []
    for rank, part in enumerate(parts):
        try:
            cpus = validate_cpu_ids(part)
        except ValueError as exc:
            raise PoolError(f"{flag}, rank {rank} ({part!r}): {exc}") from exc
        if not cpus:
            raise PoolError(f"{flag}, rank {rank}: empty CPU list")
        twice = named_twice(part)
        if twice:
            raise PoolError(f"{flag}, rank {rank} ({part!r}): CPU(s) {format_cpu_list(twice)} named twice in one "
                            "list; name each CPU once")
        lists.append(cpus)
    overlap = first_overlap(lists)
    if overlap:
        a, b, shared = overlap
        raise PoolError(f"{flag}: {whose} ranks {a} and {b} overlap on CPUs {shared}")
    return lists
