"""A run's recorded start is bounded below by what the run itself recorded first: run.json's
start_time (and so duration_s, the page's wall seconds) by the trainer's own start in
train_meta.json and by the creation of its first event file. A copy with the first run's
start moved earlier (no run before it to overlap), hashed again, passed."""

import datetime
import json

from set_copies import current_copy, remake_manifest

from sacscale.evidence import run_start
from sacscale.evidence.verify import verify

SET = "h200x1_shared_short"
RUN = "shared_r1_n1_pool7"  # the set's first run: no earlier window to overlap
RUN_JSON, META = f"runs/{RUN}/run.json", f"runs/{RUN}/train_meta.json"


def _earlier(root, rel, seconds):
    record = json.loads((root / rel).read_text())
    record["start_time"] -= seconds
    if "duration_s" in record:
        record["duration_s"] = round(record["end_time"] - record["start_time"], 3)
        started = datetime.datetime.fromisoformat(record["started_at"]) - datetime.timedelta(seconds=seconds)
        record["started_at"] = started.isoformat()
    (root / rel).write_text(json.dumps(record, indent=1))
    return record["start_time"]


def _records_after(tmp_path, *moves):
    root = current_copy(tmp_path, SET)
    starts = {rel: _earlier(root, rel, seconds) for rel, seconds in moves}
    remake_manifest(root)
    return verify(root, report_pending=True).records, starts, root


def test_a_run_record_starting_long_before_the_trainers_is_named(tmp_path):
    records, starts, root = _records_after(tmp_path, (RUN_JSON, 1000))
    trainer = json.loads((root / META).read_text())["start_time"]
    start = starts[RUN_JSON]
    assert f"{RUN}: run.json start_time {start:.3f} is {trainer - start:.1f} s before train_meta.json's start_time " \
           f"{trainer:.3f}, beyond the 60 s the trainer's start (its interpreter and imports) may take after the " \
           "wrapper's" in records, records


def test_a_start_moved_with_the_trainers_is_named_by_the_first_event(tmp_path):
    records, starts, _ = _records_after(tmp_path, (RUN_JSON, 1000), (META, 1000))
    start = starts[RUN_JSON]
    assert any(p.startswith(f"{RUN}: run.json start_time {start:.3f} is ")
               and p.endswith(", when its event file was created), beyond the 300 s the trainer's start and setup "
                              "may take") for p in records), records
    assert not any("before train_meta.json's start_time" in p for p in records), records


def test_a_start_within_the_graces_passes():
    meta = {"start_time": 1000.0}
    assert run_start.start_problems(RUN, {"start_time": 1000.0 - 59}, meta, 1000.0 + 240) == []
