"""A run's rank folders against its world size: the trainer starts `world_size` ranks and
each writes its own `tb/rank{r}` events, from its own collector (its own seed and
environments), so a run holds exactly the rank folders rank0..rank{world_size-1}; that no
two ranks log alike is sacscale.evidence.copied_events'."""

from __future__ import annotations

from pathlib import Path

from sacscale.analysis.events import EventFileError, rank_dirs


def _folders(run_dir: Path) -> list[str] | None:
    try:
        return [f"tb/{folder.name}" for folder in rank_dirs(run_dir).values()]
    except EventFileError:
        return None  # the metrics check names why


def rank_count_problems(name: str, meta: dict, run_dir: Path) -> list[str]:
    """The rank folders present (exactly rank0..rank{world_size-1}) and train_meta.json's
    per-rank lists against world_size."""
    world_size = meta.get("world_size")
    if not (isinstance(world_size, int) and not isinstance(world_size, bool)):
        return []
    problems = []
    folders = _folders(run_dir)
    expected = [f"tb/rank{rank}" for rank in range(world_size)]
    if folders is not None and len(folders) != world_size:
        problems.append(f"{name}: the run holds {len(folders)} rank folder(s) ({', '.join(folders)}), but "
                        f"train_meta.json world_size is {world_size}: each rank writes its own events")
    elif folders is not None and folders != expected:  # the right count, other indices (rank1 moved to rank2)
        extra = [folder.removeprefix("tb/") for folder in folders if folder not in expected]
        missing = [folder.removeprefix("tb/") for folder in expected if folder not in folders]
        problems.append(f"{name}: tb holds {', '.join(extra)} but not {', '.join(missing)}; world_size "
                        f"{world_size} gives rank0..rank{world_size - 1}")
    rows = meta.get("nonfinite_rows_by_rank")
    if isinstance(rows, list) and len(rows) != world_size:
        problems.append(f"{name}: train_meta.json nonfinite_rows_by_rank holds {len(rows)} count(s), "
                        f"world_size is {world_size}: one a rank")
    return problems

