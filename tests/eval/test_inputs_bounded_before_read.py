"""`evaluate` and `render` read a checkpoint (and --model) whole into memory: a 40 GiB sparse
file given as the checkpoint ended in `input too large for memory`, naming no file, and a
12 GiB one was read (a minute, 12.9 GB resident) before it was called no torch checkpoint.
Now the size is judged (fstat) before anything is read, against a bound far above what this
trainer's files weigh, and a checkpoint that does not begin as a zip archive is refused
unread: one line naming the file and the bound, exit 2."""

import os
import struct
import zipfile


from sacscale.cli import main
from sacscale.eval import evaluate_checks

from test_evaluate import make_checkpoint

FAST = ["--envs-per-command", "1", "--seconds", "0.2", "--settle-s", "0.1", "--threads", "1"]


def sparse(path, size: int, begins: bytes = b"PK\x03\x04"):
    with open(path, "wb") as fh:
        fh.write(begins)
        fh.truncate(size)
    return path


def evaluated(tmp_path, capsys, checkpoint, model) -> tuple[int, str]:
    code = main(["evaluate", str(checkpoint), "--output", str(tmp_path / "e.json"), "--model", str(model), *FAST])
    err = capsys.readouterr().err
    assert "\n" not in err.strip() and not (tmp_path / "e.json").exists()
    return code, err.strip()


def test_a_huge_sparse_checkpoint_is_refused_by_its_size_naming_it(tmp_path, capsys, model_file):
    huge = sparse(tmp_path / "huge.pt", 40 * 2**30)
    code, err = evaluated(tmp_path, capsys, huge, model_file)
    assert code == 2 and err == (f"sacscale evaluate: error: {huge}: {40 * 2**30:,} bytes, more than any checkpoint "
                                 f"of this trainer weighs (the bound is {2**30:,} bytes, 1,024 MiB): refused unread")


def test_a_checkpoint_over_the_bound_is_never_read(tmp_path, capsys, model_file, monkeypatch):
    monkeypatch.setattr(evaluate_checks, "MAX_CHECKPOINT_BYTES", 2**20)  # the 1 GiB bound, made small to test
    big = sparse(tmp_path / "big.pt", 2**20 + 1)
    code, err = evaluated(tmp_path, capsys, big, model_file)
    assert code == 2 and err.endswith(f"{big}: {2**20 + 1:,} bytes, more than any checkpoint of this trainer "
                                      f"weighs (the bound is {2**20:,} bytes, 1 MiB): refused unread")


def test_a_checkpoint_that_is_no_zip_archive_is_refused_unread(tmp_path, capsys, model_file):
    plain = sparse(tmp_path / "plain.pt", 2**20, begins=b"\x80\x02not a zip")
    code, err = evaluated(tmp_path, capsys, plain, model_file)
    assert code == 2 and err.endswith(f"{plain}: not a readable torch checkpoint (it does not begin as torch's zip "
                                      "format does): refused unread")


def test_a_model_over_its_bound_is_refused_naming_it(tmp_path, capsys, model_file, monkeypatch):
    monkeypatch.setattr(evaluate_checks, "MAX_MODEL_BYTES", 2**20)  # the 256 MiB bound, made small to test
    big = sparse(tmp_path / "big.mjb", 2**20 + 1, begins=b"")
    code, err = evaluated(tmp_path, capsys, make_checkpoint(tmp_path / "ckpt.pt"), big)
    assert code == 2 and err.endswith(f"{big}: {2**20 + 1:,} bytes, more than any model of this trainer weighs "
                                      f"(the bound is {2**20:,} bytes, 1 MiB): refused unread")


def test_the_bounds_leave_a_wide_margin_over_the_trainers_own_files(tmp_path, model_file):
    checkpoint = make_checkpoint(tmp_path / "ckpt.pt")
    assert os.path.getsize(checkpoint) * 50 < evaluate_checks.MAX_CHECKPOINT_BYTES
    assert os.path.getsize(model_file) * 1000 < evaluate_checks.MAX_MODEL_BYTES
    assert evaluate_checks.read_input(checkpoint) == checkpoint.read_bytes()


def rewritten(checkpoint, out, record: str = "data/0", inflate_to: int = 0):
    """The checkpoint's archive written again with `record` compressed (DEFLATED), padded
    with zeros to `inflate_to` bytes: a zip bomb inside the file-size bound."""
    with zipfile.ZipFile(checkpoint) as src, zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename.endswith(record):
                dst.writestr(info.filename, data.ljust(inflate_to, b"\0"), compress_type=zipfile.ZIP_DEFLATED)
            else:
                dst.writestr(info, data)
    return out


def test_a_checkpoint_whose_record_is_compressed_is_refused_before_it_is_inflated(tmp_path, capsys, model_file):
    """A 3 MB checkpoint whose data/0 was compressed and declared 3 GiB took a minute and
    3.4 GB before torch.load called it unreadable: torch.save stores every record as it is."""
    checkpoint = make_checkpoint(tmp_path / "ckpt.pt")
    bomb = rewritten(checkpoint, tmp_path / "bomb.pt", inflate_to=32 * 2**20)
    assert os.path.getsize(bomb) < 2**20
    record = next(i.filename for i in zipfile.ZipFile(bomb).infolist() if i.filename.endswith("data/0"))
    code, err = evaluated(tmp_path, capsys, bomb, model_file)
    assert code == 2 and err.endswith(f"{bomb}: not a readable torch checkpoint (its record {record!r} is "
                                      "compressed; torch stores every record as it is): refused unread")


def test_records_declaring_more_than_the_bound_are_refused_unread(tmp_path, monkeypatch):
    checkpoint = make_checkpoint(tmp_path / "ckpt.pt")
    bound = os.path.getsize(checkpoint) + 100
    monkeypatch.setattr(evaluate_checks, "MAX_CHECKPOINT_BYTES", bound)
    records = zipfile.ZipFile(checkpoint).infolist()
    record = next(i for i in records if i.filename.endswith("data/0"))
    data = bytearray(checkpoint.read_bytes())
    entry = data.index(record.filename.encode(), data.index(b"PK\x01\x02")) - 46  # its central directory entry
    struct.pack_into("<I", data, entry + 24, 2**20)  # the size it declares, as a crafted file could
    declared = sum(i.file_size for i in records) - record.file_size + 2**20
    assert evaluate_checks.archive_problem(bytes(data)) == (
        f"not a readable torch checkpoint (its records would inflate to {declared:,} bytes, more than any "
        f"checkpoint of this trainer weighs: the bound is {bound:,} bytes): refused unread")


def test_the_trainers_own_checkpoint_passes_the_archive_check(tmp_path):
    checkpoint = make_checkpoint(tmp_path / "ckpt.pt")
    assert evaluate_checks.archive_problem(checkpoint.read_bytes()) is None
    assert all(i.compress_type == zipfile.ZIP_STORED for i in zipfile.ZipFile(checkpoint).infolist())
