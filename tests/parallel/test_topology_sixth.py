"""Recorded topologies of the sixth hardening pass: an lscpu row with a CPU of 10**23 or -1
(planned into a pool, `1-15,99999999999999999999999`, which the run then could not pin) or
a CPU listed twice (counted as two cores) passed `plan-matrix`; each is now named."""

import pytest

from sacscale.parallel.topology import TopologyError, parse_lscpu

ROWS = ["CPU CORE SOCKET NODE"] + [f"{i} {i} 0 0" for i in range(16)]


@pytest.mark.parametrize("row, says", [
    ("99999999999999999999999 16 0 0", "a number outside 0..8191"),
    ("-1 17 0 0", "a number outside 0..8191"),
    ("16 16 0 99999999999999999999", "a number outside 0..8191"),
    ("3 7 0 0", "CPU 3 is listed twice"),
])
def test_a_row_no_machine_has_is_named(row, says):
    with pytest.raises(TopologyError, match=rf"lscpu: line 18 '{row}': {says}"):
        parse_lscpu("\n".join(ROWS + [row]) + "\n")


def test_a_machine_of_sixteen_cpus_parses():
    assert [c.id for c in parse_lscpu("\n".join(ROWS) + "\n")] == list(range(16))
