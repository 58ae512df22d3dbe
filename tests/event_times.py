"""Event files rewritten record by record, each event's wall time changed by `retime(step, wall_time)`
or a tag's values by `revalue(step, value)` (tensorboard's own record writer, so the checksums hold)."""

import io
import struct
from pathlib import Path


def _payloads(data: bytes):
    at = 0
    while at < len(data):
        (length,) = struct.unpack("<Q", data[at:at + 8])
        yield data[at + 12:at + 12 + length]
        at += 12 + length + 4


def _rewritten(path: Path, change) -> None:
    """The event file at `path` with `change(event)` applied to each event that has a summary."""
    from tensorboard.compat.proto import event_pb2
    from tensorboard.summary.writer.record_writer import RecordWriter

    out = io.BytesIO()
    writer = RecordWriter(out)
    for payload in _payloads(path.read_bytes()):
        event = event_pb2.Event.FromString(payload)
        if event.HasField("summary"):
            change(event)
        writer.write(event.SerializeToString())
    path.write_bytes(out.getvalue())


def retimed(path: Path, retime) -> None:
    """The event file at `path` with each event's wall time `retime(step, wall_time)`."""
    def change(event):
        event.wall_time = retime(event.step, event.wall_time)
    _rewritten(path, change)


def revalued(path: Path, tag: str, revalue) -> None:
    """The event file at `path` with each simple value of `tag` `revalue(step, value)`."""
    def change(event):
        for value in event.summary.value:
            if value.tag == tag:
                value.simple_value = revalue(event.step, value.simple_value)
    _rewritten(path, change)


def event_file(run_dir: Path, rank: int = 0) -> Path:
    """The run's one event file of `rank`."""
    (found,) = sorted((run_dir / "tb" / f"rank{rank}").glob("events.out.tfevents.*"))
    return found


def without_tags(path: Path, removed) -> None:
    """The event file at `path` with every value of a tag `removed(tag)` names taken out (an
    event left with no value is kept, as the trainer's own writer could not have written it)."""
    def change(event):
        kept = [value for value in event.summary.value if not removed(value.tag)]
        del event.summary.value[:]
        event.summary.value.extend(kept)
    _rewritten(path, change)
