"""Events copied from another rank or run named by their measured values, whatever their
bytes or wall times: a rank's events copied with one value changed, or another run's
events with every wall time moved by the runs' start difference, passed verify (only
byte-identical files and ranks equal at every step were named). And the ways around a share
pooled over every measured tag at the same (tag, step), exact: one tag family copied, values
copied one logged step off, values nudged by a float32 ulp, and the CPU preset's short series."""

import io
import json

from set_copies import copy_committed_set, remake_manifest

import numpy as np

from sacscale.analysis.events import Scalar
from sacscale.evidence.copied_events import _measured, copied_rank_problems
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
    assert ("shared_r1_n2_shared: tb/rank0 and tb/rank1 share most measured values of a tag (Episode/return: "
            "29 of 29, Perf/rank_fps: 30 of 30, Perf/total_fps: 30 of 30 and 9 more tags, whatever the step), but "
            "each rank collects and times its own: a rank's events copied") in records, records


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
    assert ("shared_r2_n1_pool7: runs/shared_r1_n1_pool7 tb/rank0 and runs/shared_r2_n1_pool7 tb/rank0 share "
            "most measured values of a tag (Episode/return: 29 of 29, Perf/rank_fps: 30 of 30, Perf/total_fps: 30 "
            "of 30 and 9 more tags, whatever the step): another run's events") in records, records
    assert not any("the same event file content" in p for p in records), records  # the bytes differ


def test_another_runs_returns_alone_copied_are_named(tmp_path):
    """The returns the page's learning figures rest on are a twelfth of a rank's measured
    values: pooled with the phase times, a copy of them alone was never most of them."""
    def forge(root):
        theirs = {(e.step, v.tag): v.simple_value for e in _events(root / R2_FILE) for v in e.summary.value}
        events = _events(root / R1_FILE)
        for event in events:
            for value in event.summary.value:
                if value.tag.startswith("Episode/"):
                    value.simple_value = theirs[(event.step, value.tag)]
        _write(root / R1_FILE, events)

    records = _records_after(tmp_path, forge)
    assert ("shared_r2_n1_pool7: runs/shared_r1_n1_pool7 tb/rank0 and runs/shared_r2_n1_pool7 tb/rank0 share "
            "most measured values of a tag (Episode/return: 29 of 29, whatever the step): another run's events"
            ) in records, records


def test_a_ranks_values_copied_one_logged_step_late_are_named(tmp_path):
    """Compared only at the same (tag, step), a copy moved by one logged step agreed on none."""
    def forge(root):
        earlier, last = {}, {}
        for event in _events(root / RANK0):
            for value in event.summary.value:
                if _measured(value.tag):
                    earlier[(event.step, value.tag)] = last.get(value.tag)
                    last[value.tag] = value.simple_value
        events = _events(root / RANK1)
        for event in events:
            for value in event.summary.value:
                if earlier.get((event.step, value.tag)) is not None:
                    value.simple_value = earlier[(event.step, value.tag)]
        _write(root / RANK1, events)

    records = _records_after(tmp_path, forge)
    assert ("shared_r1_n2_shared: tb/rank0 and tb/rank1 share most measured values of a tag (Episode/return: "
            "28 of 29, Perf/rank_fps: 29 of 30, Time/collector_action_select_ms: 29 of 30 and 8 more tags, "
            "whatever the step), but each rank collects and times its own: a rank's events copied") in records, records


def test_a_ranks_values_copied_with_every_other_one_an_ulp_off_are_named(tmp_path):
    """Exactly equal values only: half of them an ulp off was not more than half equal."""
    def forge(root):
        events = _events(root / RANK0)
        for at, value in enumerate(v for e in events for v in e.summary.value if _measured(v.tag)):
            if at % 2 == 0:
                value.simple_value = float(np.nextafter(np.float32(value.simple_value), np.float32(np.inf)))
        _write(root / RANK1, events)

    records = _records_after(tmp_path, forge)
    assert ("shared_r1_n2_shared: tb/rank0 and tb/rank1 share most measured values of a tag (Episode/return: "
            "29 of 29, Perf/rank_fps: 30 of 30, Perf/total_fps: 30 of 30 and 9 more tags, whatever the step), but "
            "each rank collects and times its own: a rank's events copied") in records, records


def _rank(steps: range, offset: float) -> dict:
    return {"Perf/rank_env_steps": [Scalar(s, 1.0, float(s * 64)) for s in steps],
            "Perf/iteration": [Scalar(s, 1.0, float(s)) for s in steps],
            "Time/learner_update_ms": [Scalar(s, 1.0, 3.0 + offset + s / 7) for s in steps]}


def test_ranks_that_agree_on_counters_only_are_their_own():
    steps = range(10, 310, 10)
    assert copied_rank_problems("run", {0: _rank(steps, 0.0), 1: _rank(steps, 0.5)}) == []
    assert copied_rank_problems("run", {0: _rank(steps, 0.0), 1: _rank(steps, 0.0)}) == [
        "run: tb/rank0 and tb/rank1 share most measured values of a tag (Time/learner_update_ms: 30 of 30, "
        "whatever the step), but each rank collects and times its own: a rank's events copied"]


def _cpu_rank(fps: list[float], returns: list[float]) -> dict:
    steps = range(3, 3 * len(fps) + 1, 3)
    return {"Perf/rank_fps": [Scalar(s, 1.0, v) for s, v in zip(steps, fps)],
            "Episode/return": [Scalar(s, 1.0, v) for s, v in zip((3, 9), returns)]}


def test_a_cpu_preset_ranks_copied_rates_are_named():
    """The CPU preset's ranks log 8 rates each (24 iterations, a value every 3): under the
    20 shared values a copy needed, none was ever named there."""
    own = [21.4, 1240.7, 812.5, 1104.1, 138.8, 78.1, 77.0, 75.5]
    other = [8.2, 574.7, 389.4, 294.2, 36.8, 23.0, 33.4, 30.4]
    returns = [0.310499, 2.928227]  # two runs of one seed: the same episodes before the learner updates
    assert copied_rank_problems("cpu_r1_n2_cpu", {0: _cpu_rank(own, returns), 1: _cpu_rank(other, returns)}) == []
    assert copied_rank_problems("cpu_r1_n2_cpu", {0: _cpu_rank(own, returns), 1: _cpu_rank(own, returns)}) == [
        "cpu_r1_n2_cpu: tb/rank0 and tb/rank1 share most measured values of a tag (Perf/rank_fps: 8 of 8, "
        "whatever the step), but each rank collects and times its own: a rank's events copied"]


def _learning_rank(returns: list[float], first_update: int) -> dict:
    steps = range(1, len(returns) + 1)
    return {"Episode/return": [Scalar(s, 1.0, v) for s, v in zip(steps, returns)],
            "Loss/critic": [Scalar(s, 1.0, 0.5 + s) for s in steps if s >= first_update]}


def test_returns_before_the_learners_first_update_are_the_seeds_not_a_copy():
    """Two runs of one seed collect the same episodes until their learners update: a short
    run logging returns at every iteration shares them all up to there."""
    shared = [0.5 + i / 10 for i in range(8)]  # iterations 1..8, no update yet
    first = _learning_rank(shared + [3.1, 3.4, 3.2, 3.6], first_update=8)
    second = _learning_rank(shared + [2.7, 2.9, 3.0, 3.3], first_update=8)
    assert copied_rank_problems("r", {0: first, 1: second}) == []
    late = [4.0, 4.1, 4.2, 4.3, 4.4, 4.5, 4.6]
    assert copied_rank_problems("r", {0: _learning_rank(shared + late, 8), 1: _learning_rank(shared + late, 8)}) == [
        "r: tb/rank0 and tb/rank1 share most measured values of a tag (Episode/return: 7 of 7, whatever the step), "
        "but each rank collects and times its own: a rank's events copied"]
