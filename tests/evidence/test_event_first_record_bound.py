"""An event file's first record held to being TensorBoard's file-version event, its time to the
second the file's name gives. That record's time (the file's creation) bounds a sitting's first
interval (phase_bounds); its wall time set to 0 switched the bound off (read as no time: the
looser start_time was used), and its time moved back to the sitting's start with the name left
at its creation second 3.6 s later widened it; either way the first interval's logged rates
cut x0.63 passed verify."""

import io
from pathlib import Path

from set_copies import REPO, copy_committed_set, event_records, remake_manifest

from sacscale.evidence import binding
from sacscale.evidence.verify import verify

SET = "h200x1_shared_short"  # a set of the current evidence format
RUN = "shared_r1_n1_pool7"
FILE = f"runs/{RUN}/tb/rank0/events.out.tfevents.1796337489.vm.798.0"
RATES = ("Perf/rank_fps", "Perf/total_fps")


def _write(path: Path, events: list) -> None:
    from tensorboard.summary.writer.record_writer import RecordWriter

    out = io.BytesIO()
    writer = RecordWriter(out)
    for event in events:
        writer.write(event.SerializeToString())
    path.write_bytes(out.getvalue())


def _forged(tmp_path, first_time: float, cut: float = 0.632) -> list[str]:
    """verify's records once the file's first record is at `first_time` and its first log
    point's rates are cut (its interval stretched from 6.1 s to 9.7 s, past the 3.9 s between
    the file's creation and those events)."""
    root = copy_committed_set(tmp_path, SET)
    events = event_records(root / FILE)
    events[0].wall_time = first_time
    first_step = min(e.step for e in events if e.HasField("summary"))
    for event in events:
        for value in event.summary.value:
            if event.step == first_step and value.tag in RATES:
                value.simple_value *= cut
    _write(root / FILE, events)
    remake_manifest(root)
    return verify(root).records


def test_a_first_record_without_its_time_is_named(tmp_path):
    records = _forged(tmp_path, 0)
    assert (f"{RUN}: {FILE}: its first record carries no wall time, not the file-version event with the file's "
            "creation time that TensorBoard's writer opens every event file with: the file was edited, and the "
            "run's first interval is not bound to its creation") in records, records


def test_a_first_record_moved_away_from_its_name_is_named(tmp_path):
    records = _forged(tmp_path, 1796337485.445131)  # the sitting's start_time + 0.01 s
    assert (f"{RUN}: {FILE}: its first record is from 1796337485.445, its name gives its creation second "
            "1796337489: TensorBoard's writer writes that record in that second, at most 1.5 s after its start: "
            "the record or the name was edited") in records, records


def _checked(path: Path, strict: bool) -> binding.Findings:
    out = binding.Findings(strict)
    binding.check_first_record(RUN, FILE, path, binding.parse_event_name(path.name), out)
    return out


def _copy(tmp_path) -> Path:
    path = tmp_path / Path(FILE).name
    path.write_bytes((REPO / "results" / SET / FILE).read_bytes())
    return path


def test_a_file_opened_by_another_event_is_named(tmp_path):
    path = _copy(tmp_path)
    _write(path, event_records(path)[1:])  # the file-version record dropped
    out = _checked(path, strict=True)
    assert len(out.problems) == 1 and out.problems[0].startswith(
        f"{RUN}: {FILE}: its first record is a summary event, not the file-version event"), out.problems


def test_a_record_a_second_late_is_named_and_one_in_its_second_is_not(tmp_path):
    path = _copy(tmp_path)
    events = event_records(path)
    for wall_time, named in ((1796337489.0, False), (1796337490.49, False), (1796337490.5, True),
                             (1796337488.99, True)):
        events[0].wall_time = wall_time
        _write(path, events)
        assert bool(_checked(path, strict=True).problems) == named, wall_time


def test_an_older_sets_file_without_its_time_is_a_note(tmp_path):
    path = _copy(tmp_path)
    events = event_records(path)
    events[0].wall_time = 0
    _write(path, events)
    out = _checked(path, strict=False)
    assert out.problems == [] and len(out.notes) == 1 and "carries no wall time" in out.notes[0], out.notes


def test_every_committed_event_files_first_record_agrees_with_its_name():
    # measured: 114 files, every first record a file-version event 0.06 to 0.98 s after its name's second
    files = sorted((REPO / "results").rglob(binding.EVENT_PREFIX + "*"))
    assert len(files) > 100
    for path in files:
        out = _checked(path, strict=True)
        assert out.problems == [], out.problems
