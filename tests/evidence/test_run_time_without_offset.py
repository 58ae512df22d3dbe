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


def test_the_environments_time_without_its_offset_is_named(work):
    """environment.json's recorded_at bounds the runs' starts (a commit made after it is named):
    without its offset it was read as no time, and passed."""
    edit_record(work, "environment.json", lambda env: env.update(recorded_at=env["recorded_at"][:19]))
    remake_manifest(work)
    lines = [p for p in verify(work).problems() if "recorded_at" in p]
    assert len(lines) == 1 and lines[0].startswith("record: environment.json recorded_at '")
    assert lines[0].endswith("': not a time with its UTC offset, as the pipeline records (the runs' times are "
                             "bounded by it)")
