"""Which values a record holds as numbers: JSON's numbers as Python reads them.

A bool is an int to Python but never a number in a record (`true` is no count of steps).
"""

from __future__ import annotations

import math

# The longest wait any of a run's options may ask for (a peer rank, a collector step, the
# run's own wall clock): 30 days, far past any run planned here (hours on the GPU presets),
# yet a number every consumer takes: torch's process group turns its wait into a timedelta,
# which overflows past about 8.6e13 s, in each rank after the run has started.
MAX_WAIT_S = 30 * 86400


def is_number(value) -> bool:
    """An int or float (not a bool); NaN and infinities included."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def is_finite_number(value) -> bool:
    """An int or float (not a bool) that is finite: no NaN, no infinity."""
    return is_number(value) and math.isfinite(value)


def is_count(value) -> bool:
    """An integer >= 0 as evaluate records counts (not a bool, not a float)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
