"""Read every scalar of a run's TensorBoard event files, strictly.

TensorBoard's own loaders are built for files that are still being written: a
truncated last record or a failed checksum ends the read silently, and
`EventAccumulator` keeps only a reservoir sample of each tag. A metric computed from
such a read can be wrong without anyone noticing, so this module reads each TFRecord
itself (checking both CRCs, with TensorBoard's masked CRC32C) and turns every
irregularity into an `EventFileError` that names the file.

Layout written by `sacscale train --log-dir RUN_DIR`: `RUN_DIR/tb/rank{r}/events.out.tfevents.*`.
A run's folders are listed and its files opened from the folder above the run's (`within`),
none through a link: the folders listed are the ones read, even where another user swaps a
link in for the run's folder between a check of the set and the read.
An event file may be stored gzip-compressed at rest (`events.out.tfevents.*.gz`, see
`compress_event_files`): its records are read from the decompressing stream, never from
a decompressed copy in a temporary folder (which another user's TMPDIR could redirect).
"""

from __future__ import annotations

import fnmatch
import gzip
import hashlib
import io
import math
import os
import re
import struct
import zlib
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Callable, Iterator

from sacscale.atomic import atomic_write_bytes, file_kind, refuse_foreign_links
from sacscale.held_names import shown_name
from sacscale.reading import TooLarge, folder_kinds, open_regular

EVENT_GLOB = "events.out.tfevents.*"
GZ_SUFFIX = ".gz"


class EventFileError(ValueError):
    """An event file (or directory of them) that cannot give a trustworthy series."""


@dataclass(frozen=True)
class Scalar:
    step: int
    wall_time: float
    value: float


class RankFolderNameError(EventFileError):
    """A `tb/rank*` folder not named as the trainer names one: the run's layout, not its
    events, is wrong (analyze-run exits 2, as for any input it refuses)."""


class _RecordError(Exception):
    """A record that is cut short or fails a checksum (the caller names the file)."""


def _exact(stream: BinaryIO, size: int, what: str) -> bytes:
    data = stream.read(size)
    if len(data) < size:
        raise _RecordError(f"truncated record in {what}")
    return data


def _records(stream: BinaryIO) -> Iterator[bytes]:
    """Each record's payload of a TFRecord stream: length (u64), its masked CRC32C (u32),
    payload, the payload's masked CRC32C (u32), all little-endian. Raises _RecordError."""
    from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c  # heavy: only where read

    while header := stream.read(8):
        if len(header) < 8:
            raise _RecordError("truncated record in header")
        if struct.unpack("<I", _exact(stream, 4, "header crc"))[0] != masked_crc32c(header):
            raise _RecordError("failed header crc32 check")
        (length,) = struct.unpack("<Q", header)
        if length > EVENT_FILE_LIMIT:
            raise _RecordError(f"a record of {length:,} bytes")
        payload = _exact(stream, length, "data")
        if struct.unpack("<I", _exact(stream, 4, "data crc"))[0] != masked_crc32c(payload):
            raise _RecordError("failed event crc32 check")
        yield payload


def _scalar_value(value) -> float | None:
    """A Summary.Value's scalar, whether written as simple_value or as a rank-0 tensor."""
    kind = value.WhichOneof("value")
    if kind == "simple_value":
        return float(value.simple_value)
    if kind == "tensor":
        from tensorboard.util import tensor_util  # heavy: only where a tensor value is read

        array = tensor_util.make_ndarray(value.tensor)
        if array.size == 1:
            return float(array.reshape(()))
    return None


# A run's scalars are kilobytes to a few megabytes (a few hundred log points); a file of
# gigabytes (a sparse one costs no disk) would be read for minutes.
EVENT_FILE_LIMIT = 1 << 30
# What a stored .gz may unpack to: the committed sets' event files unpack to at most 260 KB,
# 3.5 to 3.7 times their stored size. A gzip bomb (a record repeated millions of times)
# unpacks a thousand times over: 734 KB to 200 MB, read for 50 s in 833 MB of memory.
GZ_RATIO_LIMIT = 16
GZ_FLOOR = 4 << 20


def gz_limit(stored: int) -> int:
    """The most bytes a .gz event file of `stored` bytes may unpack to."""
    return min(EVENT_FILE_LIMIT, max(GZ_RATIO_LIMIT * stored, GZ_FLOOR))


class _Bounded:
    """A decompressing stream read no further than `limit` bytes: EventFileError past it."""

    def __init__(self, stream: BinaryIO, limit: int, path: Path) -> None:
        self._stream, self._left, self._limit, self._path = stream, limit, limit, path

    def read(self, size: int) -> bytes:
        data = self._stream.read(min(size, self._left + 1))
        self._left -= len(data)
        if self._left < 0:
            raise EventFileError(f"{self._path}: unpacks to more than {self._limit:,} bytes ({GZ_RATIO_LIMIT} "
                                 f"times its stored size, at least {GZ_FLOOR >> 20} MB; a run's events unpack "
                                 "to under 4 times theirs): a gzip bomb, not read")
        return data


def _refuse_non_utf8(path: Path) -> None:
    """`path`, refused when it is not UTF-8 (TensorBoard's reader cannot open it)."""
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:  # a byte such as 0xff in a folder's name
        raise EventFileError(f"{shown_name(str(path))}: a path that is not UTF-8, which the event reader cannot "
                             "open; rename the folder") from None


def _open_event_file(path: Path, within: Path | None) -> tuple[BinaryIO, int]:
    """The file opened as records are (not through a link, not a FIFO; with `within`, no
    folder from there on through a link either), and its size."""
    try:
        stream = os.fdopen(open_regular(path, within), "rb")
    except FileNotFoundError:
        raise EventFileError(f"{path}: event file is missing") from None
    except TooLarge as exc:  # NotRegularFile: a link or FIFO in the file's place
        raise EventFileError(f"{path}: {exc}") from None
    except OSError as exc:
        raise EventFileError(f"{path}: cannot open it ({exc.strerror})") from None
    return stream, os.fstat(stream.fileno()).st_size


# Files read whole and remembered by their bytes' digest: verify reads each run's events
# more than once (its records, its metrics, its page's curves), and the same bytes parse to
# the same scalars wherever they lie. Parsing (the checksums in pure Python) is most of a
# read; the committed sets' files are at most 0.3 MB stored.
_PARSED: OrderedDict[bytes, dict[str, list[Scalar]]] = OrderedDict()
_PARSED_FILE_BYTES = 16 << 20
_PARSED_FILES = 128


def read_event_file(path: str | Path, within: Path | None = None) -> dict[str, list[Scalar]]:
    """Every scalar in one event file (plain or .gz), by tag, in file order. Raises
    EventFileError."""
    return _read_keyed(path, within)[1]


def _read_keyed(path: str | Path, within: Path | None) -> tuple[bytes | None, dict[str, list[Scalar]]]:
    """(the digest it is remembered by, None for a file too large to remember; read_event_file's)."""
    path = Path(path)
    _refuse_non_utf8(path)
    stream, size = _open_event_file(path, within)
    with stream:
        if size == 0:
            raise EventFileError(f"{path}: event file is empty (0 bytes)")
        if size > EVENT_FILE_LIMIT:
            raise EventFileError(f"{path}: event file of {size:,} bytes, more than a run logs "
                                 f"({EVENT_FILE_LIMIT >> 30} GB): not read")
        if size > _PARSED_FILE_BYTES:
            return None, _parsed(stream, size, path)
        data = stream.read(size)
    gz = path.name.endswith(GZ_SUFFIX)
    key = hashlib.sha256(data).digest() + bytes([gz])
    if key not in _PARSED:
        _PARSED[key] = _parsed(io.BytesIO(data), len(data), path)
        if len(_PARSED) > _PARSED_FILES:
            _PARSED.popitem(last=False)
    _PARSED.move_to_end(key)
    return key, {tag: list(series) for tag, series in _PARSED[key].items()}  # the caller's own lists


def _parsed(stream: BinaryIO, size: int, path: Path) -> dict[str, list[Scalar]]:
    if not path.name.endswith(GZ_SUFFIX):
        return _read_records(stream, path)
    try:
        with gzip.GzipFile(fileobj=stream, mode="rb") as unpacked:
            if not unpacked.peek(1):
                raise EventFileError(f"{path}: event file is empty (0 bytes once decompressed)")
            return _read_records(_Bounded(unpacked, gz_limit(size), path), path)
    except (OSError, EOFError, zlib.error) as exc:  # BadGzipFile is an OSError
        raise EventFileError(f"{path}: not a readable gzip file ({exc})") from exc


def _read_records(stream: BinaryIO, path: Path) -> dict[str, list[Scalar]]:
    """The scalars of the plain event stream `stream`; errors name `path`, the stored file."""
    from tensorboard.compat.proto import event_pb2  # tensorboard's protobuf: heavy, only where a file is read

    series: dict[str, list[Scalar]] = {}
    records = 0
    try:
        for record in _records(stream):
            try:
                event = event_pb2.Event.FromString(record)
            except Exception as exc:  # protobuf DecodeError and friends
                raise EventFileError(f"{path}: record {records} is not a valid event ({exc})") from exc
            records += 1
            _add_scalars(event, series, path)
    except _RecordError as exc:
        raise EventFileError(
            f"{path}: event file is truncated or corrupted after {records} good record(s) ({exc})"
        ) from exc
    if records == 0:
        raise EventFileError(f"{path}: event file holds no records")
    return series


def _add_scalars(event, series: dict[str, list[Scalar]], path: Path) -> None:
    if not event.HasField("summary"):
        return
    wall_time = float(event.wall_time)
    for value in event.summary.value:
        scalar = _scalar_value(value)
        if scalar is None:
            continue
        if not math.isfinite(wall_time):  # no window, rate or order can hold a NaN or infinite time
            raise EventFileError(f"{path}: step {event.step} {value.tag}: wall time {wall_time}")
        series.setdefault(value.tag, []).append(Scalar(int(event.step), wall_time, scalar))


def refuse_non_finite(path: Path, series: dict[str, list[Scalar]], checked: Callable[[str], bool]) -> None:
    """EventFileError naming `path`, the step and the tag of the first non-finite value of a
    tag that `checked` names (its trainer never logs that tag non-finite)."""
    for tag, values in series.items():
        if checked(tag):
            bad = next((s for s in values if not math.isfinite(s.value)), None)
            if bad is not None:
                raise EventFileError(f"{path}: step {bad.step} {tag}: value {bad.value} (the trainer never "
                                     "logs this tag non-finite: it leaves a NaN unwritten and stops on a "
                                     "non-finite loss)")


def _kinds(directory: Path, within: Path | None, missing: str) -> dict[str, str]:
    """folder_kinds of `directory`; EventFileError (`missing`) where it is not a folder."""
    try:
        return folder_kinds(directory, within)
    except (FileNotFoundError, NotADirectoryError):
        raise EventFileError(f"{directory}: {missing}") from None
    except TooLarge as exc:  # NotRegularFile: a folder on the way is a link
        raise EventFileError(f"{directory}: {exc}") from None
    except OSError as exc:
        raise EventFileError(f"{directory}: cannot list it ({exc.strerror})") from None


def _no_event_file(directory: Path, kinds: dict[str, str]) -> str:
    """Why `directory` gives no event file: one at an event file's name that is a FIFO, a
    folder, ... is named as what it is rather than called missing."""
    odd = sorted(n for n, kind in kinds.items() if fnmatch.fnmatchcase(n, EVENT_GLOB) and kind in ("dir", "other"))
    if odd:
        kind = file_kind(directory / odd[0]) or "not a plain file"
        return f"{directory / odd[0]}: {kind}, not a regular file (an event file is read from a plain file)"
    return f"{directory}: no event file ({EVENT_GLOB}) in this directory"


def event_files(directory: str | Path, within: Path | None = None) -> list[Path]:
    """The event files in `directory` (listed from `within`, see the module's note); a link
    at an event file's name is listed, and refused when it is read."""
    directory = Path(directory)
    kinds = _kinds(directory, within, "event directory is missing")
    files = sorted(directory / name for name, kind in kinds.items()
                   if fnmatch.fnmatchcase(name, EVENT_GLOB) and kind in ("file", "link"))
    if not files:
        raise EventFileError(_no_event_file(directory, kinds))
    names = {p.name for p in files}
    both = [n for n in names if n + GZ_SUFFIX in names]
    if both:  # the same file twice would count every event twice
        raise EventFileError(f"{directory}: {both[0]} is there both plain and as {both[0]}{GZ_SUFFIX}; keep one")
    return files


def compress_event_files(directory: str | Path) -> list[Path]:
    """Store every plain event file in `directory` gzip-compressed (`NAME.gz`, deterministic:
    no name or time in the gzip header), each checked to decompress to the same bytes before
    the plain file is removed. The compressed files, sorted. Raises EventFileError."""
    out = []
    for plain in event_files(directory):
        if plain.name.endswith(GZ_SUFFIX):
            out.append(plain)
            continue
        data = plain.read_bytes()
        packed = io.BytesIO()
        with gzip.GzipFile(filename="", mode="wb", fileobj=packed, mtime=0) as gz:
            gz.write(data)
        if gzip.decompress(packed.getvalue()) != data:
            raise EventFileError(f"{plain}: its compressed copy does not decompress to the same bytes; left as it was")
        target = plain.with_name(plain.name + GZ_SUFFIX)
        atomic_write_bytes(target, packed.getvalue())
        plain.unlink()
        out.append(target)
    return sorted(out)


def read_event_dir(directory: str | Path, within: Path | None = None) -> dict[str, list[Scalar]]:
    """All scalars of every event file in a directory, by tag, ordered by (step, wall time).

    A resumed run adds one event file per sitting, which starts at the step after its
    checkpoint; what an interrupted sitting logged from that step on is superseded, as
    TensorBoard's purge_step hides it. Files are taken in the order of their first event."""
    return read_event_dir_keyed(directory, within)[1]


def read_event_dir_keyed(directory: str | Path,
                         within: Path | None = None) -> tuple[tuple[bytes, ...] | None, dict[str, list[Scalar]]]:
    """(the files' digests in order, None where one is too large to remember: the same
    digests, the same scalars; read_event_dir's scalars)."""
    read = [_read_keyed(path, within) for path in event_files(directory, within)]
    keys = tuple(key for key, _ in read)
    return (None if None in keys else keys), merge_event_parts([part for _, part in read])


def merge_event_parts(parts: list[dict[str, list[Scalar]]]) -> dict[str, list[Scalar]]:
    """One directory's event files' scalars as read_event_dir merges them."""
    first = lambda part: min((v.wall_time for vs in part.values() for v in vs), default=0.0)  # noqa: E731
    merged: dict[str, list[Scalar]] = {}
    for part in sorted(parts, key=first):
        start = min((v.step for vs in part.values() for v in vs), default=None)
        if start is not None:
            for tag in merged:
                merged[tag] = [v for v in merged[tag] if v.step < start]
        for tag, values in part.items():
            merged.setdefault(tag, []).extend(values)
    for values in merged.values():
        values.sort(key=lambda s: (s.step, s.wall_time))
    return merged


# The trainer names each rank's folder `rank{r}`: ASCII digits, no leading zero. Any other
# spelling of a number (`rank01`, `rank\u0661`) would be read as a rank the trainer never
# wrote, and two spellings of one number would shadow each other, one of them unread.
_RANK_DIR = re.compile(r"rank(0|[1-9][0-9]*)", re.ASCII)
_RANK_PREFIX = "rank"


def run_within(run_dir: str | Path) -> tuple[Path, Path]:
    """(the run's folder, the folder its events are read from: the one above it). A run's
    folder named through a link of ours or root's is read where the link leads; through
    another user's link it is refused (EventFileError naming the link)."""
    run_dir = Path(run_dir)
    if run_dir.is_symlink():
        try:
            refuse_foreign_links(run_dir, reading=True)
        except OSError as exc:
            raise EventFileError(f"{exc.filename}: {exc.strerror}") from None
        run_dir = run_dir.resolve()
    return run_dir, run_dir.parent


def rank_dirs(run_dir: str | Path, within: Path | None = None) -> dict[int, Path]:
    """`{rank: RUN_DIR/tb/rank{rank}}` for every rank directory present (a link at a rank's
    name is listed, and refused when it is read). The trainer writes nothing else in `tb/`:
    any other entry (a file, a hidden folder, a folder of another name) is refused, as
    TensorBoard would show the events in it as one more run beside the ranks'."""
    tb = Path(run_dir) / "tb"
    kinds = _kinds(tb, within, "the run has no TensorBoard directory")
    found = {}
    for name, kind in sorted(kinds.items()):
        match = _RANK_DIR.fullmatch(name)
        if not match or kind not in ("dir", "link"):
            raise RankFolderNameError(_not_a_rank_folder(tb / name, kind, match is not None))
        found[int(match.group(1))] = tb / name
    if 0 not in found:
        raise EventFileError(f"{tb / 'rank0'}: rank 0's event directory is missing")
    return dict(sorted(found.items()))


_KIND_NAMES = {"file": "a file", "dir": "a folder", "other": "a special file (a FIFO, a socket, ...)"}


def _not_a_rank_folder(path: Path, kind: str, rank_name: bool) -> str:
    """Why `path`, an entry of a run's tb/, is not one the trainer writes."""
    shown = shown_name(str(path))
    if rank_name:
        return (f"{shown}: {_KIND_NAMES[kind]} at a rank folder's name; the trainer writes a folder of event "
                "files there")
    if kind in ("dir", "link") and path.name.startswith(_RANK_PREFIX):
        return (f"{shown}: not a rank folder the trainer writes (it names them rank0, rank1, ...: ASCII digits, "
                "no leading zero)")
    return (f"{shown}: {_KIND_NAMES.get(kind, 'a link')} the trainer does not write (it writes only rank "
            "folders rank0, rank1, ... in tb/)")


def read_run(run_dir: str | Path) -> dict[int, dict[str, list[Scalar]]]:
    """`{rank: {tag: [Scalar, ...]}}` for a run directory."""
    return {rank: merge_event_parts([part for _, part in files]) for rank, files in read_run_files(run_dir).items()}


def read_run_files(run_dir: str | Path) -> dict[int, list[tuple[Path, dict[str, list[Scalar]]]]]:
    """`{rank: [(event file, {tag: [Scalar, ...]}), ...]}` for a run directory: each file
    on its own (a resumed run's sittings each write one)."""
    run_dir, within = run_within(run_dir)
    return {rank: [(path, read_event_file(path, within)) for path in event_files(folder, within)]
            for rank, folder in rank_dirs(run_dir, within).items()}
