"""`train --resume D` and the folders and files inside D that the resume reads and writes
(train_meta.json, checkpoints/, tb/...). Before: only D and the folders above it were
judged, so a root run folder whose checkpoints/ belonged to another user (as a shared copy
unpacked or chowned leaves it) was resumed from her learning state, and the new checkpoints
were written into her folder; a link of hers there was followed to read. Now each part is
judged as the folder is, before anything starts: one line naming --resume, the part and
the problem, exit 2. The run folder here is made by hand: the refusal comes before any of
it is read."""

import os

import pytest

from cli_runs import one_line, other_users_link, sacscale
from resume_parts import WAY_OUT, make_run_dir

root_only = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (chown to another uid)")


@pytest.fixture()
def run_dir(tmp_path):
    return make_run_dir(tmp_path)


def resumed(run):
    return sacscale("train", "--resume", run, "--iterations", "9")


@root_only
def test_a_checkpoints_folder_of_another_users_is_refused(run_dir):
    os.chown(run_dir / "checkpoints", 1001, 1001)
    one_line(resumed(run_dir), f"sacscale train: error: --resume {run_dir}: {run_dir}/checkpoints belongs to "
                               f"uid 1001, another user{WAY_OUT}")


@root_only
def test_a_checkpoint_of_another_users_is_refused(run_dir):
    os.chown(run_dir / "checkpoints" / "final.pt", 1001, 1001)
    one_line(resumed(run_dir), f"--resume {run_dir}: {run_dir}/checkpoints/final.pt belongs to uid 1001, "
                               f"another user{WAY_OUT}")


@root_only
def test_another_users_link_as_a_checkpoint_is_refused(run_dir, tmp_path):
    precious = tmp_path / "precious"
    precious.write_bytes(b"root's own")
    (run_dir / "checkpoints" / "final.pt").unlink()
    os.lchown(os.path.join(run_dir, "checkpoints"), 0, 0)
    link = other_users_link(tmp_path / "w" / "evil", precious)
    (run_dir / "checkpoints" / "final.pt").symlink_to(link)
    one_line(resumed(run_dir), f"--resume {run_dir}: {run_dir}/checkpoints/final.pt is reached through {link}, "
                               "another user's symbolic link (uid 1001)")
    assert precious.read_bytes() == b"root's own"


@pytest.mark.parametrize("part", ["checkpoints", "tb", "tb/rank0"])
def test_a_part_others_can_write_in_without_the_sticky_bit_is_refused(run_dir, part):
    (run_dir / part).chmod(0o777)
    one_line(resumed(run_dir), f"--resume {run_dir}: {run_dir}/{part} is writable by other users without the "
                               f"sticky bit (mode 0777){WAY_OUT}")


def test_a_checkpoint_others_can_write_is_refused(run_dir):
    (run_dir / "checkpoints" / "rank0.pt").chmod(0o666)
    one_line(resumed(run_dir), f"--resume {run_dir}: {run_dir}/checkpoints/rank0.pt is writable by other users "
                               f"(mode 0666){WAY_OUT}")
    assert not (run_dir.parent / ".run.trainer-lock").exists()  # refused before the folder was held
