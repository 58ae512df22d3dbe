"""Scratch folders only in a temporary folder no other user can swap them in. Before: the
redraw's, probe's and reference trainer's scratch folders were made in any TMPDIR, and in
one of another user's (or one open to all without the sticky bit) that user could rename
the 0700 folder away, make one of the same name and put a symbolic link at the name about
to be written: root's file at the link's end was replaced. Now such a TMPDIR is refused in
one line naming it (exit 2), nothing made there; a sticky one (/tmp) is used."""

import os
import subprocess
import sys
import tempfile

import pytest

from sacscale import scratch
from sacscale.scratch import UnsafeTemporaryFolder, scratch_folder, temporary_folder
from cli_runs import REPO, SET, one_line


@pytest.fixture
def tmpdir_at(monkeypatch):
    """Point tempfile (which caches its choice) at a folder of the test's."""
    def at(folder):
        monkeypatch.setattr(tempfile, "tempdir", str(folder))
        return folder
    return at


def _folder(path, mode):
    path.mkdir()
    path.chmod(mode)
    return path


def test_a_temporary_folder_open_to_all_without_the_sticky_bit_is_refused(tmp_path, tmpdir_at):
    open_folder = tmpdir_at(_folder(tmp_path / "open", 0o777))
    with pytest.raises(UnsafeTemporaryFolder) as err, scratch_folder("sacscale-test-"):
        pass
    assert err.value.filename == str(open_folder)
    assert err.value.strerror == ("the temporary folder (TMPDIR) is writable by other users without the sticky bit "
                                  "(mode 0777), who could swap the scratch files written there; set TMPDIR to a "
                                  "folder of your own")
    assert list(open_folder.iterdir()) == []


def _owned_by(monkeypatch, folder, uid):
    """`folder` made another user's: for real as root, else as os.stat reports it."""
    if os.getuid() == 0:
        os.chown(folder, uid, uid)
        return
    real_stat = os.stat

    def stat(path, *args, **kwargs):
        st = real_stat(path, *args, **kwargs)
        if os.fspath(path) != str(folder):
            return st
        fields = list(st)
        fields[4] = uid
        return os.stat_result(fields)
    monkeypatch.setattr(scratch.os, "stat", stat)


def test_another_users_temporary_folder_is_refused(tmp_path, tmpdir_at, monkeypatch):
    theirs = tmpdir_at(_folder(tmp_path / "theirs", 0o755))
    _owned_by(monkeypatch, theirs, 1001)
    with pytest.raises(UnsafeTemporaryFolder, match=r"^\[Errno 1\] the temporary folder \(TMPDIR\) belongs to uid "
                                                    r"1001, another user, who could swap the scratch files"):
        temporary_folder()
    assert list(theirs.iterdir()) == []


def test_a_temporary_folder_inside_another_users_folder_is_refused(tmp_path, tmpdir_at, monkeypatch):
    theirs = _folder(tmp_path / "theirs", 0o755)
    mine = tmpdir_at(_folder(theirs / "mine", 0o700))
    _owned_by(monkeypatch, theirs, 1001)
    with pytest.raises(UnsafeTemporaryFolder) as err:
        temporary_folder()
    assert err.value.filename == str(theirs)
    assert err.value.strerror.startswith(f"holds the temporary folder {mine} and belongs to uid 1001, another user")


def test_a_sticky_temporary_folder_open_to_all_is_used(tmp_path, tmpdir_at):
    """As /tmp: no other user can rename or remove what we make there."""
    shared = tmpdir_at(_folder(tmp_path / "tmp", 0o1777))
    with scratch_folder("sacscale-test-") as folder:
        assert folder.parent == shared and (folder.stat().st_mode & 0o777) == 0o700
    assert list(shared.iterdir()) == []


def test_verify_redrawing_figures_in_an_open_tmpdir_is_refused_in_one_line(tmp_path):
    open_folder = _folder(tmp_path / "open", 0o777)
    out = tmp_path / "verify.json"
    done = subprocess.run([sys.executable, "-m", "sacscale.cli", "verify", str(REPO / "results" / SET),
                           "--redraw-figures", "--output", str(out)], capture_output=True, text=True, timeout=300,
                          env=os.environ | {"TMPDIR": str(open_folder)})
    one_line(done, f"sacscale verify: error: {open_folder}: the temporary folder (TMPDIR) is writable by other users "
                   "without the sticky bit (mode 0777), who could swap the scratch files written there; set TMPDIR "
                   "to a folder of your own")
    assert list(open_folder.iterdir()) == [] and not out.exists()
