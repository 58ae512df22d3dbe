"""write_together when the rename of a later output fails: the earlier outputs already placed
are taken back to what stood there before (the previous versions, or nothing where there was
none), so a command leaves the previous complete set or the new one, never a mix and never
nothing where the previous outputs stood; no temporary file is left."""

import errno
import os

import pytest

from sacscale.commands import _outputs_together
from sacscale.commands._outputs_together import write_together


def fail_on_rename(monkeypatch, which: int) -> None:
    """move_into_place fails (a full or failing disk) at its `which`th call, counted from 1."""
    real, calls = _outputs_together.move_into_place, []

    def move(tmp, path):
        calls.append(path)
        if len(calls) == which:
            raise OSError(errno.EIO, "Input/output error", str(path))
        real(tmp, path)

    monkeypatch.setattr(_outputs_together, "move_into_place", move)


@pytest.mark.parametrize("before", [{"a.json": b"old a", "b.png": b"old b", "c.csv": b"old c"},
                                    {"a.json": b"old a"}, {"b.png": b"old b"}, {}])
@pytest.mark.parametrize("which", [2, 3])
def test_a_failed_rename_leaves_the_previous_outputs(tmp_path, monkeypatch, before, which):
    for name, data in before.items():
        (tmp_path / name).write_bytes(data)
    fail_on_rename(monkeypatch, which)
    with pytest.raises(OSError, match="Input/output error"):
        write_together(*[(tmp_path / name, b"new " + name.encode()) for name in ("a.json", "b.png", "c.csv")])
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before  # no temporary left either


def test_the_new_set_is_placed_and_nothing_else_left(tmp_path):
    (tmp_path / "a.json").write_bytes(b"old a")
    os.link(tmp_path / "a.json", tmp_path / "other")  # a second name of the previous file is left as it was
    write_together((tmp_path / "a.json", b"new a"), (None, b"skipped"), (tmp_path / "b.png", b"new b"))
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == {"a.json": b"new a", "b.png": b"new b",
                                                                    "other": b"old a"}
