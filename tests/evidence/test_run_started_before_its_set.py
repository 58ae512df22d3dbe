"""Every run of a set starts after the set's environment was recorded (environment.json
recorded_at): the pipeline records it, plans and probes before any training, and a new
recording trains every run again. A run trained earlier, another set's put here under this
set's name with its records rewritten and hashed again, verified: the runs' windows were held
only to each other and to the plan's order."""

import datetime
import json

from set_copies import edit_record, remake_manifest

from sacscale.evidence.verify import verify

FIRST = "shared_r1_n1_pool7"  # the set's first run, 22:38:02.199 UTC


def _iso(epoch: float) -> str:
    return datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc).isoformat(timespec="seconds")


def _started(work, run: str) -> float:
    return json.loads((work / "runs" / run / "run.json").read_text())["start_time"]


def _problems_with_recorded_at(work, epoch: float) -> list[str]:
    edit_record(work, "environment.json", lambda env: env.update(recorded_at=_iso(epoch)))
    remake_manifest(work)
    return [p for p in verify(work).problems() if "environment" in p and "recorded" in p]


def test_a_run_started_before_its_set_is_named(work):
    """The environment recorded 30 s after the first run began (well within the hour two
    machines' clocks may differ by, which the commit's time allows): that run is named."""
    start = _started(work, FIRST)
    lines = _problems_with_recorded_at(work, start + 30)
    assert lines == [
        f"record: {FIRST}: run.json's window starts at {start:.3f} (2026-12-03T22:38:02+00:00), 30 s before this "
        "set's environment was recorded (2026-12-03T22:38:32+00:00, environment.json recorded_at): the pipeline "
        "starts every run after that, so this run was trained at another time or for another set"]


def test_a_run_whose_start_was_moved_before_its_set_is_named(work):
    """The run's own record moved 108 s back, to before the set's recorded_at (22:37:26)."""
    edit_record(work, f"runs/{FIRST}/run.json", lambda run: run.update(start_time=run["start_time"] - 108))
    remake_manifest(work)
    lines = [p for p in verify(work).problems() if "before this set's environment was recorded" in p]
    assert len(lines) == 1 and lines[0].startswith(f"record: {FIRST}: run.json's window starts at "), lines


def test_a_run_started_within_the_recorded_second_passes(work):
    """recorded_at holds whole seconds: a run started in the second it names, or within the
    clock's allowance of a second before it, is not named."""
    start = _started(work, FIRST)
    assert _problems_with_recorded_at(work, start) == []
    assert _problems_with_recorded_at(work, start + 0.9) == []
