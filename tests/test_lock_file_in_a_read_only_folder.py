"""A lock file that cannot be made because its folder is read-only (the user's own, mode
0555, or a read-only mount) was called "not a directory of this user's (Permission denied; a
symbolic link is refused)": it names the folder that refused it."""

import errno
import os

import pytest

from sacscale.lock_folder import unusable


@pytest.mark.parametrize("code", [errno.EACCES, errno.EROFS])
def test_a_lock_file_its_folder_refuses_names_the_folder(tmp_path, code):
    lock = tmp_path / "ro" / ".rep.lock"
    said = unusable(lock, OSError(code, os.strerror(code)))
    assert said == f"cannot be made: its folder {lock.parent} is not writable ({os.strerror(code)})"


def test_a_link_at_the_lock_files_name_is_still_called_one(tmp_path):
    lock = tmp_path / ".rep.lock"
    lock.symlink_to(tmp_path / "elsewhere")
    said = unusable(lock, OSError(errno.ELOOP, os.strerror(errno.ELOOP)))
    assert said.startswith("not a directory of this user's") and "a symbolic link is refused" in said
