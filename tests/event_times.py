"""Event files rewritten record by record, each event's wall time changed by `retime(step, wall_time)`
(tensorboard's own record writer, so the checksums hold)."""

import io
import struct
from pathlib import Path


def _payloads(data: bytes):
    at = 0
    while at < len(data):
        (length,) = struct.unpack("<Q", data[at:at + 8])
        yield data[at + 12:at + 12 + length]
        at += 12 + length + 4


def retimed(path: Path, retime) -> None:
    """The event file at `path` with each event's wall time `retime(step, wall_time)`."""
    from tensorboard.compat.proto import event_pb2
    from tensorboard.summary.writer.record_writer import RecordWriter

    out = io.BytesIO()
    writer = RecordWriter(out)
    for payload in _payloads(path.read_bytes()):
        event = event_pb2.Event.FromString(payload)
        if event.HasField("summary"):
            event.wall_time = retime(event.step, event.wall_time)
        writer.write(event.SerializeToString())
    path.write_bytes(out.getvalue())


def event_file(run_dir: Path, rank: int = 0) -> Path:
    """The run's one event file of `rank`."""
    (found,) = sorted((run_dir / "tb" / f"rank{rank}").glob("events.out.tfevents.*"))
    return found
