"""A .gz event file is read no further than real event files unpack to: a gzip bomb (a
record repeated millions of times) is named, not unpacked for a minute into GBs."""

import gzip
import os

import pytest

from sacscale.analysis import events
from sacscale.analysis.events import EventFileError, read_event_file
from synthetic_runs import linear_points, write_events


def _packed(tmp_path, copies: int):
    plain = write_events(tmp_path / "rank0", {"x": linear_points(20, 1.0, 1.0)})
    gz = plain.with_name(plain.name + ".gz")
    gz.write_bytes(gzip.compress(plain.read_bytes() * copies))  # concatenated records: a valid stream
    plain.unlink()
    return gz


def test_a_gzip_bomb_is_named_with_its_bound(tmp_path, monkeypatch):
    monkeypatch.setattr(events, "GZ_FLOOR", 64 << 10)
    gz = _packed(tmp_path, 2_000)
    assert len(gzip.decompress(gz.read_bytes())) > events.gz_limit(gz.stat().st_size)
    with pytest.raises(EventFileError, match=rf"{gz.name}: unpacks to more than [\d,]+ bytes .*gzip bomb") as err:
        read_event_file(gz)
    assert "\n" not in str(err.value)


def test_a_file_within_the_bound_reads_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(events, "GZ_FLOOR", 64 << 10)
    gz = _packed(tmp_path, 3)
    assert len(read_event_file(gz)["x"]) == 60


def test_the_bound_leaves_a_wide_margin_over_real_files():
    # the committed sets' files unpack to at most 260 KB, 3.7 times their stored size
    assert events.gz_limit(71_444) >= 10 * 260_491
    assert events.GZ_RATIO_LIMIT >= 4 * 3.7


def test_a_link_or_fifo_in_an_event_files_place_is_refused(tmp_path):
    link = tmp_path / "events.out.tfevents.1.host"
    link.symlink_to(_packed(tmp_path, 1))
    with pytest.raises(EventFileError, match=r"tfevents\.1\.host: the file is a symbolic link"):
        read_event_file(link)
    fifo = tmp_path / "events.out.tfevents.2.host"
    os.mkfifo(fifo)
    with pytest.raises(EventFileError, match=r"tfevents\.2\.host: not a regular file"):
        read_event_file(fifo)  # opened without blocking: no writer needed
