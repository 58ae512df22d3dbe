"""What verify's cross-run copy checks cost on long series: two independent runs of one rank
each, logging a rising, noised return and length at N points, judged as verify judges two runs.
Prints CPU seconds and the findings (none expected) for each N.

    python -m sacscale.evidence.copy_check_bench 4000 20000
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from sacscale.evidence.copied_events import copied_run_problems


def _run(seed: int, points: int) -> dict:
    rng = np.random.default_rng(seed)
    steps = range(10, 10 * points + 1, 10)
    series = {"Episode/return": np.linspace(0, 300, points) + rng.normal(0, 5, points),
              "Episode/length": np.linspace(20, 900, points) + rng.normal(0, 20, points)}
    return {tag: dict(zip(steps, map(float, values))) for tag, values in series.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="what verify's cross-run copy checks cost on long series")
    parser.add_argument("points", type=int, nargs="+", help="log points of each run's series")
    for points in parser.parse_args(argv).points:
        by_run = {"run_a": {0: _run(10, points)}, "run_b": {0: _run(20, points)}}
        start = time.process_time()
        found = copied_run_problems(by_run)
        print(f"{points} points: {time.process_time() - start:.2f} s CPU, findings: {found or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
