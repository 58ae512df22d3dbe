"""Outputs, scratch and lock folders where another user can rename entries. Before: the
outputs' check tested only the bit for all others (0o002), so root's verification record
in a folder root owns but a group with other members may write (0770) was replaced by a
member's file; a report was made in such a folder; and only the output's own folder was
judged, once, while the write a second later went by path: the user owning a folder above
it moved it away and put an open folder of hers at its name, and root's record went there.
The lock folder was judged one level up only. Now one rule (sacscale.atomic:
`_others_can_rename`) judges the folder and every folder on the way to it, for outputs,
scratch and locks alike; a group that holds this user alone shares nothing."""

import grp
import os
import pwd
import tempfile

import pytest

from cli_runs import REPO, SET, one_line, sacscale
from sacscale import locks
from sacscale.atomic import _others_in_group, others_can_swap
from sacscale.scratch import UnsafeTemporaryFolder, temporary_folder

RESULTS = REPO / "results" / SET
ROOT_ONLY = pytest.mark.skipif(os.getuid() != 0, reason="giving a folder to another user or group needs root")


def _folder(path, mode, uid=None, gid=None):
    path.mkdir()
    path.chmod(mode)
    if uid is not None or gid is not None:
        os.chown(path, -1 if uid is None else uid, -1 if gid is None else gid)
    return path


def _shared_group():
    """A group of this system that holds a user other than this one (as its primary group):
    (its name, its gid, that user's name)."""
    for user in pwd.getpwall():
        if user.pw_uid != os.getuid():
            try:
                return grp.getgrgid(user.pw_gid).gr_name, user.pw_gid, user.pw_name
            except KeyError:
                continue
    pytest.skip("no group of another user here")


@ROOT_ONLY
def test_verify_output_into_a_folder_another_users_group_may_write_is_refused(tmp_path):
    name, gid, member = _shared_group()
    shared = _folder(tmp_path / "grp", 0o770, uid=0, gid=gid)
    output = shared / "v.json"
    done = sacscale("verify", RESULTS, "--output", output)
    one_line(done, f"sacscale verify: error: argument --output: {shared}: is writable by its group {name} (gid {gid}; "
                   f"other users in it: {member}) without the sticky bit (mode 0770), who could replace what is "
                   f"written there; write {output} into a folder of your own")
    assert list(shared.iterdir()) == []


@ROOT_ONLY
def test_a_report_made_in_such_a_folder_is_refused(tmp_path):
    name, gid, member = _shared_group()
    shared = _folder(tmp_path / "grp", 0o770, uid=0, gid=gid)
    out = shared / "rep"
    metrics = sorted((RESULTS / "metrics").glob("*.json"))
    done = sacscale("report", "--summary", RESULTS / "summary.json", "--metrics", *metrics, "--output-md",
                    out / "report.md", "--output-html", out / "report.html", "--figures-dir", out / "figures")
    one_line(done, f"sacscale report: {shared} (where {out} would be made): is writable by its group {name} "
                   f"(gid {gid}; other users in it: {member}) without the sticky bit (mode 0770), who could replace "
                   "the report's files there")
    assert list(shared.iterdir()) == []


@ROOT_ONLY
def test_a_group_the_system_does_not_know_counts_as_others(tmp_path):
    unknown = next(g for g in range(424242, 424342) if _others_in_group(g) is None)
    shared = _folder(tmp_path / "grp", 0o770, uid=0, gid=unknown)
    assert others_can_swap(shared) == (f"is writable by its group (gid {unknown}, not known here) without the "
                                       "sticky bit (mode 0770)")


def test_a_folder_of_this_users_private_group_is_written(tmp_path):
    """A group that holds this user alone (umask 002 setups) shares nothing."""
    if _others_in_group(os.getgid()) != []:
        pytest.skip("this user's primary group holds other users")
    own = _folder(tmp_path / "own", 0o770, gid=os.getgid())
    done = sacscale("verify", RESULTS, "--output", own / "v.json")
    assert done.returncode == 0, done.stderr
    assert (own / "v.json").is_file()


def test_an_output_inside_a_folder_open_to_others_is_refused(tmp_path):
    """The folder above could be renamed and an open one of theirs put at its name between
    the check and the write; every folder on the way is judged."""
    open_folder = _folder(tmp_path / "open", 0o777)
    mine = _folder(open_folder / "mine", 0o755)
    output = mine / "v.json"
    done = sacscale("verify", RESULTS, "--output", output)
    one_line(done, f"sacscale verify: error: argument --output: {mine}: is inside {open_folder}, which is writable by "
                   "other users without the sticky bit (mode 0777), who could replace what is written there; write "
                   f"{output} into a folder of your own")
    assert list(mine.iterdir()) == []


@ROOT_ONLY
def test_roots_folder_inside_another_users_folder_is_refused_before_anything_runs(tmp_path):
    """The reviewer's race: root's `rootsub` in eve's `evehome`, which she renamed 1.6 s
    into the verification, putting an open folder of hers at its name. It is refused when
    the arguments are read, so there is no window."""
    evehome = _folder(tmp_path / "evehome", 0o755, uid=1001, gid=1001)
    rootsub = _folder(evehome / "rootsub", 0o755)
    output = rootsub / "v.json"
    done = sacscale("verify", RESULTS, "--output", output)
    one_line(done, f"sacscale verify: error: argument --output: {rootsub}: is inside {evehome}, which belongs to uid "
                   "1001, another user, who could replace what is written there")
    assert list(rootsub.iterdir()) == []


def test_a_link_of_ours_in_a_folder_open_to_others_is_judged_where_it_stands(tmp_path):
    """Through a link of ours, the folder where it leads is safe, but the link itself can be
    replaced by anyone who may write where it stands."""
    safe = _folder(tmp_path / "safe", 0o755)
    open_folder = _folder(tmp_path / "open", 0o777)
    (open_folder / "to-safe").symlink_to(safe)
    assert others_can_swap(safe) is None
    assert others_can_swap(open_folder / "to-safe") == (f"is inside {open_folder}, which is writable by other users "
                                                        "without the sticky bit (mode 0777)")


def test_a_lock_folder_with_an_open_folder_two_levels_up_is_refused(tmp_path, monkeypatch):
    open_folder = _folder(tmp_path / "open", 0o777)
    mine = _folder(open_folder / "rs2", 0o755)
    monkeypatch.setenv("SACSCALE_LOCK_DIR", str(mine / "locks"))
    with pytest.raises(locks.LockError) as err:
        locks.private_folder("torchinductor")
    assert str(err.value) == (f"lock folder {mine / 'locks'} is inside {open_folder}, which is writable by other "
                              "users without the sticky bit (mode 0777); another user could plant, hold or swap its "
                              "files: remove it, or set SACSCALE_LOCK_DIR to a folder of your own (mode 0700)")


@ROOT_ONLY
def test_a_lock_folder_in_roots_folder_inside_another_users_is_refused(tmp_path, monkeypatch):
    evehome = _folder(tmp_path / "evehome", 0o755, uid=1001, gid=1001)
    rs2 = _folder(evehome / "rs2", 0o755)
    monkeypatch.setenv("SACSCALE_LOCK_DIR", str(rs2 / "locks"))
    with pytest.raises(locks.LockError, match=rf"^lock folder {rs2 / 'locks'} is inside {evehome}, which belongs to "
                                              r"uid 1001, another user; another user could plant"):
        locks.private_folder("torchinductor")


@ROOT_ONLY
def test_a_temporary_folder_another_users_group_may_write_is_refused(tmp_path, monkeypatch):
    name, gid, member = _shared_group()
    shared = _folder(tmp_path / "grp", 0o770, uid=0, gid=gid)
    monkeypatch.setattr(tempfile, "tempdir", str(shared))
    with pytest.raises(UnsafeTemporaryFolder) as err:
        temporary_folder()
    assert err.value.strerror == (f"the temporary folder (TMPDIR) is writable by its group {name} (gid {gid}; other "
                                  f"users in it: {member}) without the sticky bit (mode 0770), who could swap the "
                                  "scratch files written there; set TMPDIR to a folder of your own")


def test_a_temporary_folder_of_this_users_private_group_is_used(tmp_path, monkeypatch):
    """Scratch judged any group-writable folder shared; one of a group holding this user
    alone is not."""
    if _others_in_group(os.getgid()) != []:
        pytest.skip("this user's primary group holds other users")
    own = _folder(tmp_path / "own", 0o770, gid=os.getgid())
    monkeypatch.setattr(tempfile, "tempdir", str(own))
    assert temporary_folder() == str(own)
