"""train_meta.json `collector_pools` (where the trainer pinned each rank's collectors and
learner) against the run's command, resolved as the trainer resolves it
(sacscale.parallel.pools): an explicit `--collector-cpu-ids` gives the pools and the `how`,
an empty or explicit `--learner-cpu-ids` the learners' CPUs (`learner_affinity`). `auto`
depends on the CPUs of the process that resolved it and is not derived. The command is
compared with plan.json's `cpu_pools` by the records check."""

from __future__ import annotations

from sacscale.parallel.pools import stated_learner_cpus, stated_pools


def _stated(args, world_size: int) -> dict:
    """The fields of collector_pools the command gives (none it cannot give)."""
    stated: dict = {}
    pools = stated_pools(getattr(args, "collector_cpu_ids", None))
    if pools is not None:
        stated.update(pools.as_dict())
    elif getattr(args, "collector_cpu_ids", None) is not None:
        stated["how"] = "auto"  # only the word: the rest is the resolving host's
    learners = stated_learner_cpus(getattr(args, "learner_cpu_ids", None), world_size)
    if learners is not None:
        stated["learner_affinity"] = learners
    return stated


def _shown(value) -> str:
    text = str(value)
    return text if len(text) <= 80 else text[:77] + "..."


def pool_record_problems(name: str, meta: dict, args, reference: bool) -> list[str]:
    recorded = meta.get("collector_pools")
    world_size = meta.get("world_size")
    if reference or not isinstance(recorded, dict) or not isinstance(world_size, int) or world_size < 1:
        return []  # the reference trainer records none; a world size is compared elsewhere
    try:
        stated = _stated(args, world_size)
    except ValueError as exc:
        return [f"{name}: run.json command's CPU lists do not parse ({exc})"]
    problems = []
    for key, value in stated.items():
        if key not in recorded:
            continue
        held = recorded[key]
        if key == "how" and value == "auto":
            same = isinstance(held, str) and held.startswith("auto:")
        else:
            same = held == value
        if not same:
            problems.append(f"{name}: train_meta.json collector_pools.{key} {_shown(held)}, but the run's command "
                            f"(as the trainer resolves it) gives {_shown(value)}")
    return problems
