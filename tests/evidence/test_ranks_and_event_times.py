"""A run's rank folders held to its world size, its ranks' events to being each its own,
and every scalar of its event files to its sitting's window: a rank's folder deleted or a
copy added, or another run's events under this run's file name with only the first record
(the file-version record, all the time checks read) rewritten, passed verify."""

import json
import shutil
import struct

from set_copies import copy_committed_set, edit_record, remake_manifest

from sacscale.evidence.verify import verify

SET = "h200x1_shared_short"
TWO_RANKS = "runs/shared_r1_n2_shared"


def _records_after(tmp_path, forge) -> list[str]:
    root = copy_committed_set(tmp_path, SET)
    forge(root)
    remake_manifest(root)
    return verify(root).records


def test_a_deleted_rank_folder_is_named(tmp_path):
    def forge(root):
        shutil.rmtree(root / TWO_RANKS / "tb" / "rank1")
        edit_record(root, f"{TWO_RANKS}/train_meta.json", lambda m: m.update(nonfinite_rows_by_rank=[0]))

    records = _records_after(tmp_path, forge)
    assert ("shared_r1_n2_shared: the run holds 1 rank folder(s) (tb/rank0), but train_meta.json world_size is 2: "
            "each rank writes its own events") in records, records
    assert ("shared_r1_n2_shared: train_meta.json nonfinite_rows_by_rank holds 1 count(s), world_size is 2: "
            "one a rank") in records, records


def test_a_third_rank_folder_copied_from_another_is_named(tmp_path):
    def forge(root):
        shutil.copytree(root / TWO_RANKS / "tb" / "rank1", root / TWO_RANKS / "tb" / "rank2")
        edit_record(root, f"{TWO_RANKS}/train_meta.json", lambda m: m.update(nonfinite_rows_by_rank=[0, 0, 0]))

    records = _records_after(tmp_path, forge)
    assert ("shared_r1_n2_shared: the run holds 3 rank folder(s) (tb/rank0, tb/rank1, tb/rank2), but "
            "train_meta.json world_size is 2: each rank writes its own events") in records, records
    assert ("shared_r1_n2_shared: tb/rank1 and tb/rank2 share most measured values of a tag, whatever the step, or "
            "follow its step-to-step turns (Episode/length: 28 of 28, Episode/return: 28 of 28, Perf/rank_fps: 30 of "
            "30 and 25 more tags), but each rank collects and times its own: a rank's events copied"
            ) in records, records


def _first_record_end(data: bytes) -> int:
    (length,) = struct.unpack("<Q", data[:8])
    return 12 + length + 4


def _file_version_record(wall_time: float) -> bytes:
    import io

    from tensorboard.compat.proto import event_pb2
    from tensorboard.summary.writer.record_writer import RecordWriter

    out = io.BytesIO()
    RecordWriter(out).write(event_pb2.Event(wall_time=wall_time, file_version="brain.Event:2").SerializeToString())
    return out.getvalue()


def test_another_runs_events_under_a_rewritten_first_record_are_named(tmp_path):
    def forge(root):
        mine = root / "runs/shared_r1_n1_pool7/tb/rank0/events.out.tfevents.1796337489.vm.798.0"
        theirs = (root / "runs/shared_r2_n1_pool7/tb/rank0/events.out.tfevents.1796337690.vm.1385.0").read_bytes()
        start = json.loads((root / "runs/shared_r1_n1_pool7/train_meta.json").read_text())["start_time"]
        mine.write_bytes(_file_version_record(start + 3) + theirs[_first_record_end(theirs):])

    records = _records_after(tmp_path, forge)
    found = [p for p in records if p.startswith("shared_r1_n1_pool7: tb/rank0 events log ")]
    assert found == ["shared_r1_n1_pool7: tb/rank0 events log Time/learner_update_ms at step 300 at "
                     "1796337728.151, 199.3 s after train_meta.json's end_time 1796337528.836: another run's events"], \
        records


def test_the_committed_runs_events_lie_in_their_windows(tmp_path):
    records = verify(copy_committed_set(tmp_path, SET)).records
    assert not [p for p in records if "rank folder" in p or "sitting's" in p or "copied" in p], records


def test_a_rank_folder_moved_to_another_index_is_named(tmp_path):
    def forge(root):
        (root / TWO_RANKS / "tb" / "rank1").rename(root / TWO_RANKS / "tb" / "rank2")

    records = _records_after(tmp_path, forge)
    assert "shared_r1_n2_shared: tb holds rank2 but not rank1; world_size 2 gives rank0..rank1" in records, records


def _named_rank_folder(tmp_path, run: str, folder: str) -> list[str]:
    """verify's metrics problems once `folder` is added to `run`'s tb/ as a copy of rank 0's."""
    root = copy_committed_set(tmp_path, SET)
    shutil.copytree(root / run / "tb" / "rank0", root / run / "tb" / folder)
    remake_manifest(root)
    return verify(root).metrics


def test_a_rank_index_with_a_leading_zero_is_named(tmp_path):
    found = _named_rank_folder(tmp_path, TWO_RANKS, "rank01")
    assert len(found) == 1 and found[0].startswith("shared_r1_n2_shared: cannot recompute: '") and found[0].endswith(
        f"{TWO_RANKS}/tb/rank01': not a rank folder the trainer writes (it names them rank0, rank1, ...: "
        "ASCII digits, no leading zero)"), found


def test_a_rank_index_in_other_digits_is_named(tmp_path):
    found = _named_rank_folder(tmp_path, "runs/shared_r1_n1_pool7", "rank\u0660")
    assert len(found) == 1 and "runs/shared_r1_n1_pool7/tb/rank\u0660': not a rank folder" in found[0], found
