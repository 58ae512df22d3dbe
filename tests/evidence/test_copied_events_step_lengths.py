"""Episode lengths the step alone decides are no copy: each env steps once an iteration from
the run's start, so early in a run (before any env's second episode ends) every episode that
ends at iteration s lasted s steps, and at one iteration a log point every run and rank logs
Episode/length = s. A CPU set of 40 iterations logging every iteration failed its own
verification on them (every pair of runs "another run's events"); a copy of lengths the runs
measured is still named."""

import numpy as np

from sacscale.analysis.events import Scalar
from sacscale.evidence.copied_events import copied_rank_problems, copied_run_problems, measured_values
from sacscale.evidence.learner_start import seed_alone_until

# 16 envs a rank, a batch of 128: the learner's first update at iteration 10, its episodes
# the seed's alone up to iteration 11 (log every 1)
CONFIG = {"num_envs": 16, "batch_size": 128, "log_every": 1, "iterations": 40, "extra": {}}
STEPS = range(1, 41)


def _noisy(seed: int, base: float) -> dict[int, float]:
    rng = np.random.default_rng(seed)
    return {s: float(np.float32(base * (1 + 0.05 * rng.standard_normal()))) for s in STEPS}


def _rank(seed: int, lengths: dict[int, float]) -> dict:
    """A rank's events: its own rates, phase times and returns, and these lengths."""
    own = {"Perf/rank_fps": _noisy(seed, 120.0), "Time/collector_step_ms": _noisy(seed + 1, 8.0),
           "Episode/return": _noisy(seed + 2, 3.0), "Episode/length": lengths}
    return {tag: [Scalar(s, 1.0, v) for s, v in sorted(values.items())] for tag, values in own.items()}


def _first_episodes(first_end: int) -> dict[int, float]:
    """The lengths logged once a run's envs start to fall (at `first_end`): each its step."""
    return {s: float(s) for s in STEPS if s >= first_end}


def test_lengths_equal_to_their_step_in_every_run_are_no_copy():
    runs = {f"cpu_r{i}_n1_cpu": {0: _rank(10 * i, _first_episodes(end))} for i, end in ((1, 30), (2, 33), (3, 30))}
    by_run = {name: {rank: measured_values(series, seed_alone_until(CONFIG)) for rank, series in ranks.items()}
              for name, ranks in runs.items()}
    assert copied_run_problems(by_run) == []
    assert copied_rank_problems("cpu_r1_n2_cpu", {0: _rank(40, _first_episodes(31)),
                                                  1: _rank(50, _first_episodes(33))}, CONFIG) == []


def test_lengths_the_runs_measured_copied_are_still_named():
    """Past the envs' first episodes the mean length is the run's own (here 37.5, 41.2...): a
    copy of those is named, the step-decided ones beside them left out."""
    measured = {s: float(np.float32(30 + s / 3 + (s % 5) / 7)) for s in STEPS if s >= 12}
    mixed = {s: float(s) if s < 20 else v for s, v in measured.items()}
    for lengths in (measured, mixed):
        found = copied_rank_problems("cpu_r1_n2_cpu", {0: _rank(60, lengths), 1: _rank(70, dict(lengths))}, CONFIG)
        assert len(found) == 1 and "Episode/length" in found[0] and found[0].endswith("a rank's events copied"), found
