"""When the learner starts, without torch (verify reads it from a run's recorded config on
machines without torch): the rows its replay must hold before the first update."""

from __future__ import annotations


def learning_starts_rows(learning_starts: int | None, batch_size: int, num_envs: int) -> int:
    """`learning_starts` when set, else max(batch size, 10 x num_envs) rows."""
    if learning_starts is not None:
        return learning_starts
    return max(batch_size, 10 * num_envs)
