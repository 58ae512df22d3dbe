"""environment.json's recorded_at is taken before the runs and bounds their starts where a
commit's time is judged. A value that was no time at all, a deleted key, or a time after the
runs (year 9999) was read as no time and passed; each is named in a set made by this code."""

import pytest
from set_copies import edit_record, remake_manifest

from sacscale.evidence.verify import verify


def _recorded_at_lines(work, change) -> list[str]:
    edit_record(work, "environment.json", change)
    remake_manifest(work)
    return [p for p in verify(work).problems() if "recorded_at" in p]


@pytest.mark.parametrize("value", ["yesterday afternoon", 1.0e9, None])
def test_a_recorded_at_that_is_no_time_is_named(work, value):
    lines = _recorded_at_lines(work, lambda env: env.update(recorded_at=value))
    assert f"record: environment.json recorded_at {value!r}: not a time (ISO text with its UTC offset, as the " \
           "pipeline records)" in lines


def test_a_deleted_recorded_at_is_named(work):
    lines = _recorded_at_lines(work, lambda env: env.pop("recorded_at"))
    assert lines == ["record: environment.json recorded_at: missing; the pipeline records when it recorded the "
                     "environment"]


def test_a_recorded_at_after_the_runs_is_named(work):
    named = _recorded_at_lines(work, lambda env: env.update(recorded_at="9999-12-31T23:59:59+00:00"))
    lines = [p for p in named if p.startswith("record: environment.json recorded_at")]
    assert len(lines) == 1, named
    # and every run, each started before it (binding.check_started_after)
    assert len([p for p in named if "before this set's environment was recorded" in p]) == 4, named
    assert lines[0].startswith("record: environment.json recorded_at 9999-12-31T23:59:59+00:00: ")
    assert lines[0].endswith(" h after the first run began (2026-12-03T22:38:02+00:00, run.json start_time); the "
                             "environment is recorded before the runs (clocks may differ by 1 h)")


def test_a_recorded_at_within_the_clock_allowance_names_only_the_runs(work):
    """Half an hour after the first run starts: within what two machines' clocks may differ by
    where a commit's time is judged, so recorded_at itself is not named; but it was taken on
    the runs' own host, one clock, and each run that started before it is named."""
    lines = _recorded_at_lines(work, lambda env: env.update(recorded_at="2026-12-03T23:08:00+00:00"))
    assert not [p for p in lines if p.startswith("record: environment.json recorded_at")], lines
    assert len(lines) == 4 and all("before this set's environment was recorded" in p for p in lines), lines


@pytest.mark.parametrize("value", ["9999-12-31T23:59:59-14:00", "0001-01-01T00:00:00+14:00"])
def test_a_recorded_at_outside_the_calendar_in_utc_is_named_and_the_checks_go_on(work, value):
    """A time that is in years 1-9999 as written but not in UTC ended verify with `unexpected
    structure in the set's JSON (ValueError: year 10000 is out of range)`, every later check undone."""
    edit_record(work, "environment.json", lambda env: env.update(recorded_at=value))
    remake_manifest(work)
    result = verify(work)
    assert not [p for p in result.problems() if "unexpected" in p], result.problems()
    assert [p for p in result.problems() if "recorded_at" in p] == [
        f"record: environment.json recorded_at {value!r}: out of range (in UTC it falls outside the years 1-9999), "
        "not a time the pipeline records"]
    assert result.files_checked > 0
