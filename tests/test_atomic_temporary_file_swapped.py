"""A writer's temporary file is written and moved only while it is the file the writer made:
in a folder another user can rename in, its name can be given to a link (to a file of the
victim's) or to another file between its making and the write, and the write must not go
through the link, nor the other file become the output."""

import os
from pathlib import Path

import pytest

import sacscale.atomic as atomic
from sacscale.atomic import atomic_path, atomic_write_text, move_into_place, open_temporary


@pytest.fixture
def victim(tmp_path):
    path = tmp_path / "victim.txt"
    path.write_text("the victim's own\n")
    return path


def _swap_after_claim(monkeypatch, make):
    """Whatever `make(tmp)` puts at the temporary name right after the writer made it."""
    claim = atomic._claim

    def claim_then_swap(tmp):
        fd = claim(tmp)
        os.unlink(tmp)
        make(tmp)
        return fd

    monkeypatch.setattr(atomic, "_claim", claim_then_swap)


@pytest.mark.parametrize("planted", ["link", "file"])
def test_a_temporary_name_given_to_another_file_is_not_written_through(tmp_path, victim, monkeypatch, planted):
    out = tmp_path / "shared" / "out.json"
    out.parent.mkdir()
    if planted == "link":
        _swap_after_claim(monkeypatch, lambda tmp: tmp.symlink_to(victim))
    else:
        _swap_after_claim(monkeypatch, lambda tmp: tmp.write_text("planted\n"))
    with pytest.raises(OSError, match="replaced by another process while being written") as caught:
        atomic_write_text(out, '{"ours": 1}\n')
    assert caught.value.filename.startswith(str(out.parent / ".out.tmp"))
    assert victim.read_text() == "the victim's own\n"
    assert not out.exists() and not out.is_symlink()
    assert list(out.parent.iterdir()) == []  # what stood at the temporary name is gone too


def test_a_link_put_at_the_temporary_name_after_the_write_is_not_moved_into_the_output(tmp_path, victim):
    out = tmp_path / "out.png"
    with pytest.raises(OSError, match="replaced by another process"):
        with atomic_path(out) as tmp:
            with open_temporary(tmp) as fh:
                fh.write(b"ours")
            os.unlink(tmp)
            tmp.symlink_to(victim)
    assert not out.exists() and not out.is_symlink()
    assert victim.read_text() == "the victim's own\n"


def test_a_figure_is_not_drawn_through_a_link_at_its_temporary_name(tmp_path, victim, monkeypatch):
    from sacscale.pyplot import pyplot
    from sacscale.report import plots

    _swap_after_claim(monkeypatch, lambda tmp: tmp.symlink_to(victim))
    out = tmp_path / "figures" / "scaling_bars.png"
    with pytest.raises(OSError, match="replaced by another process"):
        plots._save(pyplot().figure(), out)
    assert victim.read_text() == "the victim's own\n"
    assert sorted(p.name for p in out.parent.iterdir()) == []


def test_an_untouched_temporary_file_is_written_and_moved(tmp_path):
    out = tmp_path / "out.txt"
    atomic_write_text(out, "ours\n")
    assert out.read_text() == "ours\n"
    with atomic_path(tmp_path / "b.bin") as tmp:
        with open_temporary(tmp) as fh:
            fh.write(b"x")
    assert (tmp_path / "b.bin").read_bytes() == b"x"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    with pytest.raises(OSError):
        move_into_place(Path(tmp_path / "never-claimed"), out)


@pytest.fixture
def foreign_link(tmp_path, victim):
    """`tmp_path/shared/out` a link of another user's to the victim's folder, as one planted
    in /tmp would be (made here and given to uid 1001: root only)."""
    if os.getuid() != 0:
        pytest.skip("giving a link to another user needs root")
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o1777)
    link = shared / "out"
    link.symlink_to(victim.parent)
    os.lchown(link, 1001, 1001)
    return link


@pytest.mark.parametrize("under", ["victim.txt", "sub/new.json"])
def test_no_output_is_written_through_another_users_link_on_its_way(foreign_link, victim, under):
    with pytest.raises(OSError, match=r"a symbolic link of another user's \(uid 1001\) on the way to the output") \
            as caught:
        atomic_write_text(foreign_link / under, "ours\n")
    assert caught.value.filename == str(foreign_link)
    assert victim.read_text() == "the victim's own\n"
    assert sorted(p.name for p in victim.parent.iterdir()) == ["shared", "victim.txt"]


def test_a_link_of_ours_or_roots_on_the_way_is_followed(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "mine").symlink_to(tmp_path / "real")
    atomic_write_text(tmp_path / "mine" / "out.txt", "ours\n")
    assert (tmp_path / "real" / "out.txt").read_text() == "ours\n"


def test_the_cli_names_the_link_and_writes_nothing(foreign_link, victim):
    from cli_runs import REPO, SET, one_line, sacscale

    done = sacscale("verify", REPO / "results" / SET, "--output", foreign_link / "victim.txt")
    one_line(done, f"{foreign_link}: a symbolic link of another user's (uid 1001) on the way to the output; an "
                   "output is never written through one")
    assert victim.read_text() == "the victim's own\n"


@pytest.mark.parametrize("writer", ["train_meta", "model"])
def test_the_trainers_record_and_the_model_are_not_written_through_a_link_at_their_temporary_name(
        tmp_path, victim, monkeypatch, writer):
    from sacscale.train.config import TrainingError

    _swap_after_claim(monkeypatch, lambda tmp: tmp.symlink_to(victim))
    if writer == "train_meta":
        from sacscale.train.record import atomic_json

        with pytest.raises(TrainingError, match="replaced by another process"):
            atomic_json(tmp_path / "train_meta.json", {"status": "running"})
    else:
        import mujoco

        from sacscale.task.g1_model import save_model

        model = mujoco.MjModel.from_xml_string("<mujoco><worldbody><geom size='1'/></worldbody></mujoco>")
        with pytest.raises(OSError, match="replaced by another process"):
            save_model(model, tmp_path / "m.mjb")
    assert victim.read_text() == "the victim's own\n"
