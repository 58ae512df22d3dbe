"""`train --resume D`: the files of D's parts judged by the group rule folders get, and
links of one's own below a part judged, not walked into. Before: a root-owned rank0.pt,
final.pt or train_meta.json of mode 0664 whose group held another user passed (files were
judged by owner and o+w alone), so that user could write the learning state the resume
loads and the record it appends to; and a link of one's own inside checkpoints/ to /usr
had the check walk all of /usr for seconds and refuse the resume over a dangling system
link the resume never reads. The run folder is made by hand: the refusal comes first."""

import grp
import os
import pwd

import pytest

from cli_runs import one_line, sacscale
from resume_parts import WAY_OUT, make_run_dir
from sacscale.checks import InputError, check_resumed_parts

root_only = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (chgrp to another user's group)")


@pytest.fixture()
def run_dir(tmp_path):
    return make_run_dir(tmp_path)


def _shared_group():
    """(name, gid, a user in it other than this one): the primary group of another user."""
    for user in pwd.getpwall():
        if user.pw_uid != os.getuid():
            try:
                return grp.getgrgid(user.pw_gid).gr_name, user.pw_gid, user.pw_name
            except KeyError:
                continue
    pytest.skip("no group of another user here")


@root_only
@pytest.mark.parametrize("part", ["checkpoints/rank0.pt", "checkpoints/final.pt", "train_meta.json"])
def test_a_file_a_group_holding_another_user_may_write_is_refused(run_dir, part):
    name, gid, member = _shared_group()
    os.chown(run_dir / part, 0, gid)
    (run_dir / part).chmod(0o664)
    done = sacscale("train", "--resume", run_dir, "--iterations", "9")
    one_line(done, f"--resume {run_dir}: {run_dir}/{part} is writable by its group {name} (gid {gid}; other users "
                   f"in it: ")
    assert f"{member}" in done.stderr and f"(mode 0664){WAY_OUT}" in done.stderr


def test_a_file_of_ones_own_group_writable_only_by_a_private_group_passes(run_dir):
    if (os.getgid() and grp.getgrgid(os.getgid()).gr_mem) or any(
            u.pw_gid == os.getgid() and u.pw_uid != os.getuid() for u in pwd.getpwall()):
        pytest.skip("this user's primary group holds other users")
    (run_dir / "checkpoints" / "rank0.pt").chmod(0o664)
    check_resumed_parts(run_dir)


def test_a_link_of_ones_own_below_a_part_is_judged_not_walked_into(run_dir, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "loose").write_bytes(b"x")
    (elsewhere / "loose").chmod(0o666)  # nothing the resume reads
    (elsewhere / "gone").symlink_to(tmp_path / "no-such-file")
    (run_dir / "checkpoints" / "usr").symlink_to(elsewhere)
    (run_dir / "tb" / "all").symlink_to("/")
    check_resumed_parts(run_dir)
    elsewhere.chmod(0o777)  # the folder it leads to is still judged
    with pytest.raises(InputError, match=f"{run_dir}/checkpoints/usr is writable by other users without the sticky"):
        check_resumed_parts(run_dir)


def test_a_part_that_is_a_link_of_ones_own_is_walked(run_dir, tmp_path):
    kept = tmp_path / "kept"
    (run_dir / "checkpoints").rename(kept)
    (run_dir / "checkpoints").symlink_to(kept)
    (kept / "final.pt").chmod(0o666)
    with pytest.raises(InputError, match=f"{run_dir}/checkpoints/final.pt is writable by other users \\(mode 0666\\)"):
        check_resumed_parts(run_dir)
