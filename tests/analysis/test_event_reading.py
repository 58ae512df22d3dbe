"""Event files are read completely and strictly: every irregularity names the file."""

import os

import pytest

from sacscale.analysis.events import EventFileError, read_event_dir, read_event_file, read_run
from synthetic_runs import linear_points, write_events, write_run


def test_reads_every_event_without_sampling(tmp_path):
    # EventAccumulator keeps a reservoir of 10,000 scalars per tag by default; we need all.
    n = 12_000
    path = write_events(tmp_path / "rank0", {"Perf/total_env_steps": linear_points(n, 3.0, 0.5)})
    series = read_event_file(path)["Perf/total_env_steps"]
    assert len(series) == n
    assert [s.step for s in series] == list(range(1, n + 1))
    assert series[-1].value == 3.0 * n
    assert series[-1].wall_time == pytest.approx(1000.0 + 0.5 * (n - 1))


def test_dir_merges_files_and_orders_by_step(tmp_path):
    d = tmp_path / "rank0"
    write_events(d, {"x": [(3, 3.0, 30.0), (1, 1.0, 10.0)]})
    assert [s.value for s in read_event_dir(d)["x"]] == [10.0, 30.0]  # ordered by step
    # a second file in the same directory (a resumed writer, from step 2 on) supersedes
    # what the first logged from that step on
    second = write_events(tmp_path / "other", {"x": [(2, 4.0, 20.0), (4, 5.0, 40.0)]})
    second.rename(d / f"{second.name}.restart")
    assert [(s.step, s.value) for s in read_event_dir(d)["x"]] == [(1, 10.0), (2, 20.0), (4, 40.0)]


def _one_file(tmp_path):
    return write_events(tmp_path / "rank0", {"Perf/total_env_steps": linear_points(20, 1.0, 1.0)})


def test_missing_file_is_named(tmp_path):
    missing = tmp_path / "events.out.tfevents.123.host"
    with pytest.raises(EventFileError, match=r"events\.out\.tfevents\.123\.host: event file is missing"):
        read_event_file(missing)


def test_empty_file_is_named(tmp_path):
    path = _one_file(tmp_path)
    path.write_bytes(b"")
    with pytest.raises(EventFileError) as err:
        read_event_file(path)
    assert str(path) in str(err.value) and "empty" in str(err.value)


def test_truncated_file_is_named(tmp_path):
    path = _one_file(tmp_path)
    data = path.read_bytes()
    path.write_bytes(data[:-5])  # cut into the last record
    with pytest.raises(EventFileError) as err:
        read_event_file(path)
    assert str(path) in str(err.value) and "truncated or corrupted" in str(err.value)


def test_corrupted_byte_is_named(tmp_path):
    path = _one_file(tmp_path)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x5A  # flip bits inside a record: its CRC no longer matches
    path.write_bytes(bytes(data))
    with pytest.raises(EventFileError) as err:
        read_event_file(path)
    assert str(path) in str(err.value) and "crc" in str(err.value).lower()


def test_truncated_file_in_a_run_fails_analysis_naming_it(tmp_path):
    from sacscale.analysis.metrics import analyze_run

    run = write_run(tmp_path / "p_r1_n1", linear_points(10, 5.0, 1.0), ranks=2)
    victim = next((run / "tb" / "rank1").glob("events.out.tfevents.*"))
    victim.write_bytes(victim.read_bytes()[:-3])
    with pytest.raises(EventFileError) as err:
        analyze_run(run)
    assert str(victim) in str(err.value)


def test_directory_without_event_file_is_named(tmp_path):
    (tmp_path / "rank0").mkdir()
    with pytest.raises(EventFileError, match="no event file"):
        read_event_dir(tmp_path / "rank0")


def test_an_event_file_that_is_a_fifo_is_named_as_one(tmp_path):
    from sacscale.analysis.metrics import analyze_run

    run = write_run(tmp_path / "p_r1_n1", linear_points(10, 5.0, 1.0), ranks=1)
    victim = next((run / "tb" / "rank0").glob("events.out.tfevents.*"))
    victim.unlink()
    os.mkfifo(victim)
    with pytest.raises(EventFileError) as err:  # refused from its kind, never opened (no hang)
        analyze_run(run)
    assert str(err.value).startswith(f"{victim}: a FIFO, not a regular file")


def test_run_without_rank0_is_named(tmp_path):
    (tmp_path / "run" / "tb" / "rank1").mkdir(parents=True)
    with pytest.raises(EventFileError, match="rank0"):
        read_run(tmp_path / "run")


def test_a_compressed_file_reads_as_the_file_it_was(tmp_path):
    import gzip

    from sacscale.analysis.events import compress_event_files

    d = tmp_path / "rank0"
    path = write_events(d, {"Perf/total_env_steps": linear_points(300, 2.0, 0.25), "x": [(1, 1.0, 5.0)]})
    plain, data = read_event_dir(d), path.read_bytes()
    (gz,) = compress_event_files(d)
    assert gz.name == path.name + ".gz" and not path.exists()
    assert gzip.decompress(gz.read_bytes()) == data  # lossless
    assert read_event_dir(d) == plain and read_event_file(gz) == read_event_file(gz)
    assert compress_event_files(d) == [gz]  # already compressed: left as it is
    twin = tmp_path / "twin"
    twin.mkdir()
    (twin / path.name).write_bytes(data)
    assert compress_event_files(twin)[0].read_bytes() == gz.read_bytes()  # deterministic: no time, no name
    # the same file twice (plain and compressed) would count every event twice
    path.write_bytes(data)
    with pytest.raises(EventFileError, match=r"both plain and as .*\.gz"):
        read_event_dir(d)


def test_a_bad_compressed_file_is_named(tmp_path):
    import gzip

    d = tmp_path / "rank0"
    path = write_events(d, {"Perf/total_env_steps": linear_points(20, 1.0, 1.0)})
    gz = path.with_name(path.name + ".gz")
    gz.write_bytes(gzip.compress(path.read_bytes())[:-30])  # cut short
    path.unlink()
    with pytest.raises(EventFileError, match=r"\.gz: not a readable gzip file"):
        read_event_file(gz)
    gz.write_bytes(b"not gzip at all")
    with pytest.raises(EventFileError, match=r"\.gz: not a readable gzip file"):
        read_event_file(gz)
    gz.write_bytes(gzip.compress(b""))
    with pytest.raises(EventFileError, match="empty"):
        read_event_file(gz)
    gz.write_bytes(gzip.compress(b"\x01" * 40))  # decompresses, but to no valid record
    with pytest.raises(EventFileError, match=r"\.gz: event file is truncated or corrupted"):
        read_event_file(gz)
