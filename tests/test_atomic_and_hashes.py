"""The bottom layer's file helpers: one atomic writer, one SHA-256 file hasher."""

import hashlib
import os

import pytest

from sacscale.atomic import atomic_path, atomic_write_bytes, temporary_path
from sacscale.hashes import NotARegularFile, sha256_file


def test_atomic_path_replaces_on_success_and_leaves_the_file_on_error(tmp_path):
    target = tmp_path / "sub" / "out.mjb"
    with atomic_path(target) as tmp:
        assert tmp.parent == target.parent and tmp.name.startswith(".") and tmp.suffix == ".mjb"
        tmp.write_bytes(b"new")
    assert target.read_bytes() == b"new"
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_bytes(b"half")
        raise RuntimeError("the writer failed")
    assert target.read_bytes() == b"new" and sorted(p.name for p in target.parent.iterdir()) == ["out.mjb"]
    atomic_write_bytes(target, b"again")
    assert target.read_bytes() == b"again" and temporary_path(target) != temporary_path(tmp_path / "x.mjb")


def test_sha256_file_hashes_regular_files_and_refuses_links_and_fifos(tmp_path):
    real = tmp_path / "real"
    real.write_bytes(b"x" * 3_000_000)
    assert sha256_file(real) == hashlib.sha256(real.read_bytes()).hexdigest()
    (tmp_path / "link").symlink_to(real)
    with pytest.raises(NotARegularFile, match="symbolic link"):
        sha256_file(tmp_path / "link")
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(NotARegularFile, match="not a regular file"):  # and it does not hang
        sha256_file(tmp_path / "fifo")


def test_the_evidence_layer_raises_its_own_error():
    from sacscale.evidence.manifest import ManifestError
    from sacscale.evidence.manifest import sha256_file as evidence_sha256

    with pytest.raises(ManifestError, match="not a regular file"):
        evidence_sha256("/dev/null")



class _Stopped(BaseException):
    """As the stop handler raises it (not an Exception: nothing may catch it on the way)."""


class _StopsWhenClaimed(dict):
    def __setitem__(self, key, value):
        raise _Stopped


def test_a_stop_while_the_temporary_file_is_made_leaves_no_file(tmp_path, monkeypatch):
    """A stop signal after the temporary file was made but before its name was handed back
    left the file: no caller could remove it (a render stopped under load left one)."""
    import sacscale.atomic as atomic

    monkeypatch.setattr(atomic, "_CLAIMED", _StopsWhenClaimed())
    with pytest.raises(_Stopped):
        atomic.temporary_path(tmp_path / "walk.webp")
    assert list(tmp_path.iterdir()) == []
