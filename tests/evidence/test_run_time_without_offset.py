"""A run's started_at written without its UTC offset (an ISO time Python reads) stopped
verify with `unexpected structure in the set's JSON (TypeError: can't compare offset-naive
and offset-aware datetimes)`, naming no file; it is named with its field."""

from set_copies import edit_record, remake_manifest

from sacscale.evidence.verify import verify

RUN = "shared_r1_n1_pool7"


def test_a_start_without_its_offset_is_named(work):
    edit_record(work, f"runs/{RUN}/run.json", lambda run: run.update(started_at=run["started_at"][:-len("+00:00")]))
    remake_manifest(work)
    problems = verify(work).problems()
    assert (f"record: runs/{RUN}/run.json: started_at '2026-12-03T22:38:02.198': not a time with its UTC offset, "
            "as the pipeline records") in problems
    assert not [p for p in problems if p.startswith("structure:")], problems
