"""Each tag the trainer logs, held to appear once at each logged iteration of each rank and
sitting (sacscale.evidence.logged_tags). The cadence check read one tag's iterations as a
set: a step-300 record given twice (Episode/return 99.0 in the copy, which the page showed
as the final return) and Episode/return dropped at step 300 (the page showed step 290's)
passed; a deleted logged step was named without naming it; `sittings: []`, which the
trainer never writes, passed."""

import json
import struct
from pathlib import Path

from set_copies import copy_committed_set, event_records, remake_manifest

from sacscale.analysis.events import Scalar
from sacscale.evidence.log_cadence import sitting_problems
from sacscale.evidence.logged_tags import tag_problems
from sacscale.evidence.verify import verify

SET = "h200x1_shared_short"
RUN = "runs/shared_r1_n1_pool7"


def _write(path: Path, events: list) -> None:
    from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c

    out = bytearray()
    for event in events:
        payload = event.SerializeToString()
        header = struct.pack("<Q", len(payload))
        out += header + struct.pack("<I", masked_crc32c(header)) + payload + struct.pack("<I", masked_crc32c(payload))
    path.write_bytes(bytes(out))


def _rank0_file(root: Path) -> Path:
    (path,) = (root / RUN / "tb/rank0").glob("events.out.tfevents.*")
    return path


def _tags(event) -> set[str]:
    return {value.tag for value in event.summary.value} if event.HasField("summary") else set()


def test_a_logged_step_given_twice_is_named(tmp_path):
    root = copy_committed_set(tmp_path, SET)
    path = _rank0_file(root)
    events = event_records(path)
    copies = []
    for event in (e for e in events if e.step == 300 and _tags(e)):
        copy = type(event).FromString(event.SerializeToString())
        copy.wall_time += 0.5
        for value in copy.summary.value:
            if value.tag == "Episode/return":
                value.simple_value = 99.0
        copies.append(copy)
    _write(path, events + copies)
    remake_manifest(root)
    records = verify(root).records
    assert any(r.startswith("shared_r1_n1_pool7: tb/rank0 logs Curriculum/penalty_scale, Env/sim_errors, "
                            "Episode/fall_rate and 43 more tag(s) twice at step 300") for r in records), records


def test_a_tag_dropped_at_a_logged_step_is_named(tmp_path):
    root = copy_committed_set(tmp_path, SET)
    path = _rank0_file(root)
    _write(path, [e for e in event_records(path) if not (e.step == 300 and _tags(e) == {"Episode/return"})])
    remake_manifest(root)
    records = verify(root).records
    assert ("shared_r1_n1_pool7: tb/rank0 has no Episode/return at step 300, where it logs Perf/rank_env_steps and "
            "Episode/fall_rate, Episode/length (the trainer writes the episode tags together)") in records, records


def test_a_deleted_logged_step_is_named(tmp_path):
    root = copy_committed_set(tmp_path, SET)
    path = _rank0_file(root)
    _write(path, [e for e in event_records(path) if e.step != 200 or not _tags(e)])
    remake_manifest(root)
    records = verify(root).records
    assert ("shared_r1_n1_pool7: tb/rank0 events log Perf/rank_env_steps every 10 iterations (at 10, 20, 30, 40, "
            "...), but the run's log_every is 10 (train_meta.json config, the command's --log-every and the plan's): "
            "step 200 is missing: logged step(s) deleted") in records, records


def test_an_empty_sittings_list_is_named(tmp_path):
    root = copy_committed_set(tmp_path, SET)
    meta_path = root / RUN / "train_meta.json"
    meta_path.write_text(json.dumps({**json.loads(meta_path.read_text()), "sittings": []}))
    remake_manifest(root)
    records = verify(root).records
    assert ("shared_r1_n1_pool7: train_meta.json sittings []: the trainer writes sittings only on a resume, one "
            "record a resumed sitting, and never an empty list") in records, records


def _series(**steps_by_tag) -> dict:
    return {tag.replace("__", "/"): [Scalar(s, 1.0, 1.0) for s in steps] for tag, steps in steps_by_tag.items()}


def test_the_trainers_sometimes_logged_tags_follow_its_rule():
    logged = [10, 20, 30, 40]
    ok = _series(Perf__rank_env_steps=logged, Perf__rank_fps=logged,
                 Episode__return=[10, 40], Episode__length=[10, 40],  # no episode ended at 20, 30
                 Loss__critic=[30, 40], Loss__actor=[30, 40])  # the learner ready from 30
    assert tag_problems(ok) == []
    assert tag_problems({**ok, "Loss/actor": [Scalar(40, 1.0, 1.0)]}) == [
        "has no Loss/actor at step 30, where it logs Perf/rank_env_steps"]
    assert tag_problems({**ok, "Perf/rank_fps": [Scalar(s, 1.0, 1.0) for s in (10, 30, 40)]}) == [
        "has no Perf/rank_fps at step 20, where it logs Perf/rank_env_steps"]
    assert tag_problems({**ok, "Perf/rank_fps": [Scalar(s, 1.0, 1.0) for s in (10, 20, 25, 30, 40)]}) == [
        "logs Perf/rank_fps at step 25, where it logs no Perf/rank_env_steps: the trainer writes every tag of a log "
        "point at once"]


def test_each_sitting_is_held_alone():
    """A resumed sitting logs again the steps after its checkpoint, in its own file."""
    meta = {"config": {"log_every": 10, "iterations": 40},
            "sittings": [{"from_iteration": 20, "config": {"log_every": 10, "iterations": 40}}]}
    files = {0: [(Path(f"events.out.tfevents.{i}"), _series(Perf__rank_env_steps=steps, Episode__return=steps))
                 for i, steps in enumerate([[10, 20, 30], [30, 40]])]}
    assert sitting_problems("r", meta, {}, files) == []
    files[0][1][1]["Episode/return"].append(Scalar(40, 2.0, 2.0))
    assert sitting_problems("r", meta, {}, files) == [
        "r: tb/rank0/events.out.tfevents.1 (sitting 2 of 2, from iteration 20) logs Episode/return twice at step 40: "
        "the trainer writes each tag once a log point"]
