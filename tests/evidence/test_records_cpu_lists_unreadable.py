"""A CPU list the records check reads (environment.json cpu.available, a run's pinned pools
and learner CPUs in train_meta.json) in a spelling it cannot parse is named in a set made by
this code, which writes each one: it used to switch the CPU checks off without a word (an
en dash in `0–1` passed a set whose runs pinned 16 CPUs). Each edit below, with the manifest
and the page made again, passed verify before."""

import json

from set_copies import made_current

from sacscale.evidence.shared_facts import cpu_findings, pool_findings
from sacscale.evidence.verify import verify

SET = "h200x1_shared_short"
RUN = "shared_r1_n1_pool7"
LAYOUT = "CPU CORE SOCKET NODE\n  0 0 0 0\n  1 1 0 0\n"


def record_problems_after(root, rel, edit) -> list[str]:
    """verify's record problems after `edit` of root/rel, with the manifest and page made again."""
    path = root / rel
    record = json.loads(path.read_text())
    edit(record)
    path.write_text(json.dumps(record, indent=2))
    made_current(root)
    result = verify(root)
    assert not (result.changed or result.missing or result.extra or result.derived), result.problems()
    return result.records


def test_available_cpus_in_a_spelling_that_does_not_parse_are_named(work):
    # an en dash (U+2013) reads as `0-1` on the page; the runs pin 1-7 and 9-15
    records = record_problems_after(work, "environment.json", lambda env: env["cpu"].update(
        available="0\u20131", available_count=2, logical_cpus=2))
    assert ("environment.json: cpu.available: '0\u20131' is not a CPU list (bad CPU list item '0\u20131' in "
            "'0\u20131'): the CPUs the runs could use, which their pinned CPUs and cpu.available_count are checked "
            "against, are not known") in records, records


def test_a_pinned_pool_that_is_not_a_cpu_list_is_named(work):
    def halves(meta):
        meta["collector_pools"]["learner_affinity"] = [[0.5]]
    records = record_problems_after(work, f"runs/{RUN}/train_meta.json", halves)
    assert f"{RUN}: train_meta.json collector_pools.learner_affinity[0]: [0.5] is not a CPU list (bad CPU id 0.5)" \
        in records, records


def test_pools_not_a_list_per_rank_are_named():
    env = {"cpu": {"available": "0-1", "layout": LAYOUT}}
    problems, _ = pool_findings("r", env, {"collector_pools": {"pools": "0-1", "learner_affinity": [None]}}, True)
    assert problems == ["r: train_meta.json collector_pools.pools: '0-1' is not a list (one CPU list per rank)"]


def test_an_unreadable_list_of_an_older_set_is_a_note_and_a_current_sets_missing_count_a_problem():
    env = {"cpu": {"available": "0..1", "available_count": 2, "layout": LAYOUT}}
    problems, notes = cpu_findings(env, strict=False)
    assert problems == [] and notes == [
        "environment.json: cpu.available: '0..1' is not a CPU list (bad CPU list item '0..1' in '0..1'): the CPUs "
        "the runs could use, which their pinned CPUs and cpu.available_count are checked against, are not known "
        "(an older set: not checked)"]
    assert cpu_findings({"cpu": {"available": "0-1", "layout": LAYOUT}}, strict=True) == (
        ["set: CPUs: environment.json cpu.available_count says nothing, cpu.available lists 2"], [])
    # no lscpu on the machine: the count is still derived from the list
    assert cpu_findings({"cpu": {"available": "0-3", "available_count": 2, "layout": None}}, strict=True)[0] == [
        "set: CPUs: environment.json cpu.available_count says 2, cpu.available lists 4"]
