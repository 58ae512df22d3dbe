"""A completed run's recorded ends are bounded above by what the code does after them:
run.json's end_time (and so duration_s, the page's wall seconds) by the trainer's steps
after its record and the wrapper's timeout, train_meta.json's by the trainer's steps after
its last logged event. A copy with an end moved later, hashed again, passed."""

import inspect
import json

from set_copies import current_copy, remake_manifest

from sacscale.evidence import run_end
from sacscale.evidence.verify import verify

SET = "h200x1_shared_short"
RUN = "shared_r2_n1_pool7"  # the set's last run: no later window to overlap
RUN_JSON, META = f"runs/{RUN}/run.json", f"runs/{RUN}/train_meta.json"


def _later(root, rel, seconds):
    record = json.loads((root / rel).read_text())
    record["end_time"] += seconds
    if "duration_s" in record:
        record["duration_s"] = round(record["end_time"] - record["start_time"], 3)
        record["ended_at"] = __import__("datetime").datetime.fromtimestamp(record["end_time"]).isoformat()
    (root / rel).write_text(json.dumps(record, indent=1))
    return record


def _records_after(tmp_path, *moves):
    root = current_copy(tmp_path, SET)
    ends = {rel: _later(root, rel, seconds)["end_time"] for rel, seconds in moves}
    remake_manifest(root)
    return verify(root, report_pending=True).records, ends


def test_a_run_record_ending_long_after_the_trainers_is_named(tmp_path):
    records, ends = _records_after(tmp_path, (RUN_JSON, 3000))
    meta_end = json.loads((tmp_path / "repo/results" / SET / META).read_text())["end_time"]
    gap = ends[RUN_JSON] - meta_end
    assert f"{RUN}: run.json end_time {ends[RUN_JSON]:.3f} is {gap:.1f} s after train_meta.json's end_time " \
           f"{meta_end:.3f}, beyond the 80 s the trainer's steps after its record may take (collectors closed, " \
           "ranks stopped, exit: the code's timeouts)" in records, records


def test_a_trainer_record_ending_long_after_its_last_event_is_named(tmp_path):
    records, ends = _records_after(tmp_path, (RUN_JSON, 3000), (META, 3000))
    assert any(p.startswith(f"{RUN}: train_meta.json end_time {ends[META]:.3f} is ")
               and p.endswith("s after the run's last event (" + p.split("last event (")[1].split(")")[0]
                              + "), beyond the 30 s its final checkpoint and exit may take (the wrapper's 30 s "
                                "grace; with several ranks, 2 all-gathers within config.timeout_s)")
               for p in records), records
    assert not any("after train_meta.json's end_time" in p for p in records), records


def test_a_run_longer_than_its_timeout_and_grace_is_named(tmp_path):
    records, ends = _records_after(tmp_path, (RUN_JSON, 3700), (META, 3700))
    assert any(p.startswith(f"{RUN}: run.json end_time {ends[RUN_JSON]:.3f} is ")
               and p.endswith("s after its start_time, beyond its timeout_s 3600 s and the wrapper's 30 s grace, "
                              "after which the wrapper kills a run") for p in records), records


def test_the_bounds_are_the_codes_timeouts():
    from sacscale.collect.collector import CollectorHandle
    from sacscale.parallel.launch import KILL_GRACE_S
    from sacscale.pipeline.run_record import GRACE_S

    assert (run_end.GRACE_S, run_end.KILL_GRACE_S) == (GRACE_S, KILL_GRACE_S)
    assert run_end.COLLECTOR_CLOSE_S == inspect.signature(CollectorHandle.close).parameters["timeout_s"].default
    assert run_end.after_last_log_s({"world_size": 2, "config": {"timeout_s": 180.0}}) == 30 + 2 * 180
    assert run_end.after_last_log_s({"world_size": 1, "config": {"timeout_s": 180.0}}) == 30
