"""Recorded topologies: an lscpu row with a CPU of 10**23 or -1
(planned into a pool, `1-15,99999999999999999999999`, which the run then could not pin) or
a CPU listed twice (counted as two cores) passed `plan-matrix`; each is now named."""

import pytest

from sacscale.parallel.topology import TopologyError, parse_lscpu

ROWS = ["CPU CORE SOCKET NODE"] + [f"{i} {i} 0 0" for i in range(16)]


@pytest.mark.parametrize("row, says", [
    ("99999999999999999999999 16 0 0", "a number outside 0..8191"),
    ("-1 17 0 0", None),
    ("16 16 0 99999999999999999999", "a number outside 0..8191"),
    ("3 7 0 0", "CPU 3 is listed twice"),
])
def test_a_row_no_machine_has_is_named(row, says):
    with pytest.raises(TopologyError, match=rf"lscpu: line 18 '{row}'" + (f": {says}" if says else " is not numbers")):
        parse_lscpu("\n".join(ROWS + [row]) + "\n")


def test_a_machine_of_sixteen_cpus_parses():
    assert [c.id for c in parse_lscpu("\n".join(ROWS) + "\n")] == list(range(16))


@pytest.mark.parametrize("row", ["\u0661\u0666 16 0 0", "1_6 16 0 0", "+16 16 0 0", "16 16 0 \uff10"])
def test_a_number_in_another_script_or_spelling_is_not_read(row):
    """int() reads `1_6` as 16, `+16`, and digits of other scripts (`\u0661\u0666` as 16): the
    row passed as a CPU that taskset and the kernel's lists would not name so."""
    with pytest.raises(TopologyError, match="is not numbers"):
        parse_lscpu("\n".join(ROWS + [row]) + "\n")


@pytest.mark.parametrize("spec", ["\u0660-\u0661", "1_0", "+1", "0-\uff13"])
def test_a_cpu_list_is_ascii_digits(spec):
    from sacscale.cpus import parse_cpu_list
    with pytest.raises(ValueError, match="bad CPU list item"):
        parse_cpu_list(spec)


def test_a_numa_affinity_in_another_script_is_named():
    """`int('\u00b2')` raised past the parser (`isdigit()` is true for it)."""
    from sacscale.parallel.topology import parse_nvidia_topo
    topo = "\tGPU0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\nGPU0\t X \t0-3\t\u00b2\tN/A\n"
    with pytest.raises(TopologyError, match="GPU0 NUMA Affinity: not a whole number"):
        parse_nvidia_topo(topo)
