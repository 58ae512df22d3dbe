"""Folders and files whose access control lists give other users write. Before: an access
list was looked for only where the mode's group bits had write, and a folder's default
list (which every entry made in it inherits, while the folder's own mode shows nothing:
root's 0755 folder, `drwxr-xr-x+`) was never read. Outputs written into such a folder
(train's run folder, report's pages, verify's record) were another user's to change. Now a
default list that lets another user, or a group holding one, write is a folder others can
write in, for every guard that judges folders (outputs, lock folders, scratch, a run env's
paths); an access list is judged by its own lines and mask, whatever the mode shows."""

import grp
import os
import pwd

import pytest

from access_lists import GROUP, GROUP_OBJ, MASK, OTHER, USER, USER_OBJ, default_for, entry, set_list, unknown_uid
from cli_runs import REPO, SET, one_line, sacscale
from sacscale import locks, posix_acl
from sacscale.atomic import _others_in_group, others_can_swap, others_can_write_file
from sacscale.pipeline.code_paths_env import code_path_problem
from sacscale.scratch import UnsafeTemporaryFolder, checked_temporary_folder

RESULTS = REPO / "results" / SET
SEE = "getfacl shows it, setfacl -k removes it"


def _folder_with_default(tmp_path, uid, **kw):
    folder = tmp_path / "acl"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    set_list(folder, "default", *default_for(uid, **kw))
    return folder


def _default_problem(uid):
    return (f"has a default access control list ({SEE}) that lets uid {uid} (not known here) write every "
            "entry made in it")


def test_verify_output_into_a_folder_whose_default_list_hands_it_to_another_user_is_refused(tmp_path):
    uid = unknown_uid()
    folder = _folder_with_default(tmp_path, uid)
    output = folder / "v.json"
    one_line(sacscale("verify", RESULTS, "--output", output),
             f"sacscale verify: error: argument --output: {folder}: {_default_problem(uid)}, who could replace what "
             f"is written there; write {output} into a folder of your own")
    assert list(folder.iterdir()) == []


def test_a_run_folder_made_in_such_a_folder_is_refused(tmp_path):
    uid = unknown_uid()
    folder = _folder_with_default(tmp_path, uid)
    one_line(sacscale("train", "--devices", "cpu", "--iterations", "2", "--log-dir", folder / "t"),
             f"sacscale train: error: argument --log-dir: {folder} (where {folder / 't'} would be made): "
             f"{_default_problem(uid)}, who could replace what is written there")
    assert list(folder.iterdir()) == []


def test_a_report_made_in_such_a_folder_is_refused(tmp_path):
    uid = unknown_uid()
    folder = _folder_with_default(tmp_path, uid)
    done = sacscale("report", "--run-set", RESULTS, "--output-dir", folder / "rep")
    one_line(done, f"{folder} (where {folder / 'rep'} would be made): {_default_problem(uid)}")
    assert list(folder.iterdir()) == []


def test_a_default_list_whose_mask_holds_back_write_is_no_problem(tmp_path):
    folder = _folder_with_default(tmp_path, unknown_uid(), mask=5)
    assert others_can_swap(folder) is None


def test_a_default_list_naming_only_this_user_and_root_is_no_problem(tmp_path):
    folder = tmp_path / "own"
    folder.mkdir(mode=0o755)
    set_list(folder, "default", entry(USER_OBJ, 7), entry(USER, 7, os.getuid()), entry(USER, 7, 0),
             entry(GROUP_OBJ, 5), entry(MASK, 7), entry(OTHER, 5))
    assert others_can_swap(folder) is None


def test_a_default_list_giving_every_user_write_is_refused_even_with_the_sticky_bit(tmp_path):
    """The umask does not apply under a default list: a file made 0666 there is o+w."""
    folder = tmp_path / "sticky"
    folder.mkdir()
    folder.chmod(0o1755)
    set_list(folder, "default", entry(USER_OBJ, 7), entry(GROUP_OBJ, 5), entry(OTHER, 7))
    assert others_can_swap(folder) == f"has a default access control list ({SEE}) that lets every other user " \
                                      "write every entry made in it"


def test_a_lock_folder_inside_such_a_folder_is_refused(tmp_path, monkeypatch):
    uid = unknown_uid()
    folder = _folder_with_default(tmp_path, uid)
    monkeypatch.setenv("SACSCALE_LOCK_DIR", str(folder / "locks"))
    with pytest.raises(locks.LockError) as err:
        locks.private_folder("torchinductor")
    assert str(err.value).startswith(f"lock folder {folder / 'locks'} is inside {folder}, which "
                                     f"{_default_problem(uid)}; another user could plant")


def test_a_temporary_folder_with_such_a_list_is_refused(tmp_path):
    uid = unknown_uid()
    folder = _folder_with_default(tmp_path, uid)
    with pytest.raises(UnsafeTemporaryFolder) as err:
        checked_temporary_folder(str(folder))
    assert err.value.strerror.startswith(f"the temporary folder (TMPDIR) {_default_problem(uid)}, who could swap")


def test_a_run_env_path_inside_such_a_folder_is_refused(tmp_path):
    uid = unknown_uid()
    folder = _folder_with_default(tmp_path, uid)
    (folder / "lib").mkdir()  # made before the list: its own has none
    problem = code_path_problem(str(folder / "lib"))
    assert problem == f"is inside {folder}, which {_default_problem(uid)}"


def test_a_file_whose_access_list_lets_another_user_write_is_named_with_that_user(tmp_path):
    uid = unknown_uid()
    part = tmp_path / "final.pt"
    part.write_bytes(b"x")
    set_list(part, "access", entry(USER_OBJ, 6), entry(USER, 6, uid), entry(GROUP_OBJ, 4), entry(MASK, 6),
             entry(OTHER, 4))
    assert others_can_write_file(part.stat(), str(part)) == (
        f"has an access control list (getfacl shows it, setfacl -b removes it) that lets uid {uid} (not known "
        "here) write it")


def test_an_access_list_whose_mask_holds_back_write_lets_no_one_write(tmp_path):
    part = tmp_path / "final.pt"
    part.write_bytes(b"x")
    set_list(part, "access", entry(USER_OBJ, 6), entry(USER, 6, unknown_uid()), entry(GROUP_OBJ, 4),
             entry(MASK, 4), entry(OTHER, 4))
    assert others_can_write_file(part.stat(), str(part)) is None


def test_an_access_list_naming_only_this_user_lets_no_one_else_write(tmp_path):
    """The mode's group bits (the mask) show write, but only this user is named."""
    folder = tmp_path / "own"
    folder.mkdir()
    set_list(folder, "access", entry(USER_OBJ, 7), entry(USER, 7, os.getuid()), entry(GROUP_OBJ, 5),
             entry(MASK, 7), entry(OTHER, 5))
    assert folder.stat().st_mode & 0o020
    assert others_can_swap(folder) is None


@pytest.mark.parametrize(("data", "says"), [
    (b"\x02\x00\x00\x00\x01\x00", "6 bytes, not a version and whole 8-byte entries"),
    (b"\x03\x00\x00\x00", "version 3, not 2"),
])
def test_a_stored_list_of_another_form_is_named(data, says):
    with pytest.raises(posix_acl.UnreadableList, match=f"^{says}$"):
        posix_acl.parse(data)


def test_a_default_list_giving_a_group_with_another_user_write_names_the_group(tmp_path):
    name, gid, member = _shared_group()
    folder = tmp_path / "grp"
    folder.mkdir(mode=0o755)
    set_list(folder, "default", entry(USER_OBJ, 7), entry(GROUP_OBJ, 5), entry(GROUP, 7, gid), entry(MASK, 7),
             entry(OTHER, 5))
    assert others_can_swap(folder) == (f"has a default access control list ({SEE}) that lets group {name} (gid "
                                       f"{gid}; other users in it: {member}) write every entry made in it")


def test_a_default_list_giving_a_group_of_this_user_alone_write_is_no_problem(tmp_path):
    if _others_in_group(os.getgid()) != []:
        pytest.skip("this user's primary group holds other users")
    folder = tmp_path / "own"
    folder.mkdir(mode=0o755)
    set_list(folder, "default", entry(USER_OBJ, 7), entry(GROUP_OBJ, 5), entry(GROUP, 7, os.getgid()),
             entry(MASK, 7), entry(OTHER, 5))
    assert others_can_swap(folder) is None


def _shared_group():
    """A group of another user's (their primary group): (its name, gid, that user's name)."""
    for user in pwd.getpwall():
        if user.pw_uid != os.getuid() and user.pw_gid != os.getgid():
            others = _others_in_group(user.pw_gid)
            if others:
                return grp.getgrgid(user.pw_gid).gr_name, user.pw_gid, ", ".join(others[:3]) + (
                    f" and {len(others) - 3} more" if len(others) > 3 else "")
    pytest.skip("no group of another user here")
