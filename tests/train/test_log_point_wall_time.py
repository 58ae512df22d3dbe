"""A log point's scalars carry the wall time read with the interval's clock: each write took
its own wall time, so on a loaded machine a log point whose learner metrics (or all-reduce, or
writes) took 0.25 s had its events 0.25 s after the clock that ended its interval, its interval
0.25 s longer in the events than in the trainer's logged rate and the next one 0.25 s shorter,
and verify called the run's times forged."""

from types import SimpleNamespace

import torch

from sacscale.train import logs


class Clock:
    """time.time and time.perf_counter of the module, advanced by hand."""

    def __init__(self):
        self.now = 1000.0

    def time(self):
        return self.now

    def perf_counter(self):
        return self.now - 900.0


class Writer:
    def __init__(self, clock):
        self.clock, self.walls = clock, {}

    def add_scalar(self, tag, value, step, walltime=None):
        self.walls[tag] = self.clock.now if walltime is None else walltime
        self.clock.now += 0.01  # each write takes a moment

    def flush(self):
        pass


def test_every_scalar_of_a_log_point_has_the_wall_time_of_its_clock_read(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(logs, "time", clock)
    interval = logs.Interval()
    clock.now += 2.0  # the interval's work

    def slow_metrics():
        clock.now += 0.25  # read after the clock, on a loaded machine
        return {}

    learner = SimpleNamespace(ready=lambda: True, metrics=slow_metrics,
                              nonfinite_counts=lambda: {"nonfinite_rows": 0, "nonfinite_targets": 0})
    writer = Writer(clock)
    logs.log_interval(writer, learner, interval, 10, 160, torch.zeros(1, dtype=torch.float64), False, 0, None, False)
    assert writer.walls and set(writer.walls.values()) == {1002.0}, writer.walls
    assert interval.t0 == 102.0  # the next interval starts at the same clock read
