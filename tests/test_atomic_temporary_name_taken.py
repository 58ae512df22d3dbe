"""Outputs whose temporary name someone has taken: a symbolic link
planted at the exact name a writer is about to write (its pid and thread) made the write
go into the file the link names; and three commands and the status block wrote their
outputs in place, through a link and half at a time."""

import os
import threading
from pathlib import Path

import pytest

from sacscale.atomic import atomic_write_text, temporary_path
from sacscale.evidence import status

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _this_writers_temporary(out):
    return out.with_name(f".{out.stem}.tmp{os.getpid()}.{threading.get_ident()}{out.suffix}")


def test_a_link_at_the_temporary_name_is_removed_not_written_through(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    out = tmp_path / "out.json"
    _this_writers_temporary(out).symlink_to(victim)
    atomic_write_text(out, "new\n")
    assert victim.read_text() == "precious\n"
    assert out.read_text() == "new\n" and not out.is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json", "victim.txt"]


def test_the_temporary_file_is_a_new_file_of_this_writer(tmp_path):
    tmp = temporary_path(tmp_path / "figure.png")
    assert tmp.is_file() and not tmp.is_symlink() and tmp.stat().st_size == 0
    assert tmp.stat().st_uid == os.getuid()


def test_a_folder_at_the_temporary_name_fails_the_write_naming_it(tmp_path):
    out = tmp_path / "out.json"
    _this_writers_temporary(out).mkdir()
    with pytest.raises(OSError) as caught:
        atomic_write_text(out, "new\n")
    assert caught.value.filename and ".out.tmp" in str(caught.value.filename)
    assert not out.exists()


def test_the_status_block_replaces_a_linked_readme_not_the_file_it_names(tmp_path):
    victim = tmp_path / "victim.md"
    victim.write_text(f"mine\n{status.BEGIN}\nOLD-ROWS\n{status.END}\n")
    readme = tmp_path / "README.md"
    readme.symlink_to(victim)
    status.write(readme, Path(REPO))
    assert victim.read_text() == f"mine\n{status.BEGIN}\nOLD-ROWS\n{status.END}\n"
    assert not readme.is_symlink() and status.BEGIN in readme.read_text() and "OLD-ROWS" not in readme.read_text()


def _sparse(path):
    path.write_bytes(b"")
    os.truncate(path, 3 << 30)


@pytest.mark.parametrize("make, says, actions", [
    (os.mkfifo, "not a plain file", ("--check", "--write")),  # read for ever
    (lambda p: p.write_bytes(b"\xff\xfe status"), "not UTF-8 text (byte 0)", ("--check", "--write")),  # unnamed
    (_sparse, "larger than 64 MB", ("--check", "--write")),  # read whole
    (lambda p: p.write_text("no block\n"), "no status block", ("--write",)),  # exit 1, as a changed block
])
def test_a_status_document_it_cannot_use_is_one_line_naming_it(tmp_path, capsys, make, says, actions):
    doc = tmp_path / "README.md"
    make(doc)
    for action in actions:
        assert status.main(["--root", REPO, action, str(doc)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith(f"python -m sacscale.evidence.status: error: {doc}: ") and \
            says in err[0], err
