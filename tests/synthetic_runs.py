"""Synthetic run directories for the pipeline's tests: TensorBoard event files written
with torch's SummaryWriter at chosen steps and wall times, laid out like
`sacscale train --log-dir RUN_DIR` (RUN_DIR/tb/rank{r}/events.out.tfevents.*)."""

from __future__ import annotations

import json
import zlib
from pathlib import Path


def write_events(directory: Path, scalars: dict[str, list[tuple[int, float, float]]]) -> Path:
    """One event file holding every (step, wall_time, value) of every tag; returns its path."""
    from torch.utils.tensorboard import SummaryWriter

    directory.mkdir(parents=True, exist_ok=True)
    writer = SummaryWriter(str(directory))
    for tag, points in scalars.items():
        for step, wall, value in points:
            writer.add_scalar(tag, value, step, walltime=wall)
    writer.close()
    files = sorted(directory.glob("events.out.tfevents.*"))
    assert len(files) == 1, files
    return files[0]


def linear_points(n: int, steps_per_event: float, seconds_per_event: float, t0: float = 1000.0, offset: float = 0.0):
    return [(i + 1, t0 + i * seconds_per_event, offset + (i + 1) * steps_per_event) for i in range(n)]


def write_run(
    run_dir: Path,
    total: list[tuple[int, float, float]],
    ranks: int = 1,
    fps: list[tuple[int, float, float]] | None = None,
    returns: list[tuple[int, float, float]] | None = None,
    lengths: list[tuple[int, float, float]] | None = None,
    time_tags: dict[str, list[tuple[int, float, float]]] | None = None,
    run_json: dict | None = None,
    rank_time_tags: dict[int, dict[str, list[tuple[int, float, float]]]] | None = None,
) -> Path:
    """A run directory whose rank 0 logs `total` as Perf/total_env_steps; each rank logs an
    equal share as Perf/rank_env_steps and Perf/iteration = step. `time_tags` go to rank 0;
    `rank_time_tags[r]` to rank r (added to, or replacing, rank 0's time_tags for r = 0)."""
    for rank in range(ranks):
        scalars = {
            "Perf/rank_env_steps": [(s, t, v / ranks) for s, t, v in total],
            "Perf/iteration": [(s, t, float(s)) for s, t, _ in total],
        }
        if rank == 0:
            scalars["Perf/total_env_steps"] = total
            if fps:
                scalars["Perf/total_fps"] = fps
            if returns:
                scalars["Episode/return"] = returns
            if lengths:
                scalars["Episode/length"] = lengths
            for tag, points in (time_tags or {}).items():
                scalars[tag] = points
        for tag, points in (rank_time_tags or {}).get(rank, {}).items():
            scalars[tag] = points
        write_events(run_dir / "tb" / f"rank{rank}", scalars)
    if run_json is not None:
        (run_dir / "run.json").write_text(json.dumps(run_json))
    return run_dir


def _own(config: str, repeat: int) -> float:
    """A small offset of its own for each configuration and repeat, in (0, 0.1)."""
    return (zlib.crc32(f"{config}/{repeat}".encode()) % 997 + 1) / 10_000


def simple_run(run_dir: Path, config: str, repeat: int, rate: float, ranks: int = 1, n: int = 10) -> Path:
    """A run whose steady rate is exactly `rate` env steps/s (one event per second)."""
    return write_run(
        run_dir,
        linear_points(n, rate, 1.0),
        ranks=ranks,
        fps=[(i + 1, 1000.0 + i, rate) for i in range(n)],
        # each run's own returns and lengths, as a real run's are (verify names runs sharing most of them)
        returns=[(i + 1, 1000.0 + i, float(i) + _own(config, repeat)) for i in range(n)],
        lengths=[(i + 1, 1000.0 + i, 10.0 * (i + _own(config, repeat))) for i in range(n)],
        run_json={
            "status": "completed",
            "exit_status": 0,
            "duration_s": n + 5.0,
            "resolved_config": {
                "run": run_dir.name, "config": config, "repeat": repeat,
                "devices": ",".join(["0"] * 1 if ranks == 1 else [str(r) for r in range(ranks)]),
                "world_size": ranks,
            },
        },
    )
