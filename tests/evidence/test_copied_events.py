"""Events copied from another rank or run named by their measured values, whatever their
bytes or wall times: a rank's events copied with one value changed, or another run's
events with every wall time moved by the runs' start difference, passed verify (only
byte-identical files and ranks equal at every step were named)."""

import io
import json

from set_copies import copy_committed_set, remake_manifest

from sacscale.analysis.events import Scalar
from sacscale.evidence.copied_events import copied_rank_problems
from sacscale.evidence.verify import verify

SET = "h200x1_shared_short"
TWO_RANKS = "runs/shared_r1_n2_shared"
RANK0 = f"{TWO_RANKS}/tb/rank0/events.out.tfevents.1796337555.vm.992.0"
RANK1 = f"{TWO_RANKS}/tb/rank1/events.out.tfevents.1796337555.vm.993.0"
R1 = "runs/shared_r1_n1_pool7"
R1_FILE = f"{R1}/tb/rank0/events.out.tfevents.1796337489.vm.798.0"
R2 = "runs/shared_r2_n1_pool7"
R2_FILE = f"{R2}/tb/rank0/events.out.tfevents.1796337690.vm.1385.0"


def _events(path):
    from tensorboard.compat.proto import event_pb2

    data, events, at = path.read_bytes(), [], 0
    while at < len(data):
        length = int.from_bytes(data[at:at + 8], "little")
        events.append(event_pb2.Event.FromString(data[at + 12:at + 12 + length]))
        at += 12 + length + 4
    return events


def _write(path, events) -> None:
    from tensorboard.summary.writer.record_writer import RecordWriter

    out = io.BytesIO()
    writer = RecordWriter(out)
    for event in events:
        writer.write(event.SerializeToString())
    path.write_bytes(out.getvalue())


def _records_after(tmp_path, forge) -> list[str]:
    root = copy_committed_set(tmp_path, SET)
    forge(root)
    remake_manifest(root)
    return verify(root).records


def test_a_ranks_events_copied_with_one_value_changed_are_named(tmp_path):
    def forge(root):
        events = _events(root / RANK0)
        for event in events:
            for value in event.summary.value:
                if event.step == 300 and value.tag == "Time/learner_update_ms":
                    value.simple_value += 1.0
        _write(root / RANK1, events)

    records = _records_after(tmp_path, forge)
    assert ("shared_r1_n2_shared: tb/rank0 and tb/rank1 agree on 359 of 360 measured values (Episode/return, "
            "Perf/rank_fps, Perf/total_fps, Time/*), but each rank collects and times its own: a rank's events "
            "copied") in records, records


def test_another_runs_events_with_every_wall_time_moved_are_named(tmp_path):
    def forge(root):
        def start(run):
            return json.loads((root / run / "run.json").read_text())["start_time"]

        shift = start(R1) - start(R2)
        events = _events(root / R2_FILE)
        for event in events:
            event.wall_time += shift
        _write(root / R1_FILE, events)

    records = _records_after(tmp_path, forge)
    assert ("shared_r2_n1_pool7: runs/shared_r1_n1_pool7 tb/rank0 and runs/shared_r2_n1_pool7 tb/rank0 agree on "
            "360 of 360 measured values (Episode/return, Perf/rank_fps, Perf/total_fps, Time/*): another run's "
            "events") in records, records
    assert not any("the same event file content" in p for p in records), records  # the bytes differ


def _rank(steps: range, offset: float) -> dict:
    return {"Perf/rank_env_steps": [Scalar(s, 1.0, float(s * 64)) for s in steps],
            "Perf/iteration": [Scalar(s, 1.0, float(s)) for s in steps],
            "Time/learner_update_ms": [Scalar(s, 1.0, 3.0 + offset + s / 7) for s in steps]}


def test_ranks_that_agree_on_counters_only_are_their_own():
    steps = range(10, 310, 10)
    assert copied_rank_problems("run", {0: _rank(steps, 0.0), 1: _rank(steps, 0.5)}) == []
    assert copied_rank_problems("run", {0: _rank(steps, 0.0), 1: _rank(steps, 0.0)}) == [
        "run: tb/rank0 and tb/rank1 agree on 30 of 30 measured values (Time/*), but each rank collects and times "
        "its own: a rank's events copied"]
