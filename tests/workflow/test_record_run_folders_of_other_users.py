"""`sacscale record-run` does not take a folder another user could swap. Before: its four
folders were judged for overlap only; the attic and the learning state's folder were made
with mkdir(parents=True) wherever they pointed, so root made folders inside another user's
folder (where she could rename, swap or read the failed attempt kept there) and wrote the
attempt where her link led (a folder of root's own). Now each is refused in one line naming
the option and the folder, exit status 2, with nothing made, moved or run."""

import os

import pytest

from test_record_run_attic_and_folders import record_run

pytestmark = pytest.mark.skipif(os.getuid() != 0, reason="giving a folder or link to another user needs root")

OTHER = 1001


def _theirs(path):
    path.mkdir()
    os.chown(path, OTHER, OTHER)
    return path


def _untouched(tmp_path, names):
    assert sorted(p.name for p in tmp_path.iterdir()) == names
    assert not (tmp_path / "ran").exists()


@pytest.mark.parametrize("option", ["attic", "state_dir", "run_dir", "work_dir"])
def test_a_folder_inside_another_users_folder_is_refused(tmp_path, option):
    theirs = _theirs(tmp_path / "theirs")
    done = record_run(tmp_path, **{option: str(theirs / "x")})
    flag = "--" + option.replace("_", "-")
    assert done.returncode == 2, done.stderr
    assert done.stderr == (f"sacscale record-run: {flag} {theirs} (where {theirs / 'x'} would be made): belongs to "
                           f"uid {OTHER}, another user, who could swap what is written there; give a folder of "
                           "your own (nothing was moved or started)\n")
    assert list(theirs.iterdir()) == []
    _untouched(tmp_path, ["theirs"])


def test_an_attic_through_another_users_link_is_refused(tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir(mode=0o700)
    link = tmp_path / "att2"
    link.symlink_to(victim)
    os.lchown(link, OTHER, OTHER)
    (tmp_path / "wk").mkdir()
    (tmp_path / "wk" / "train.log").write_text("an earlier attempt's log")
    done = record_run(tmp_path, attic=str(link))
    assert done.returncode == 2, done.stderr
    assert done.stderr == (f"sacscale record-run: --attic {link}: reached through another user's symbolic link "
                           f"(uid {OTHER}), {link}; record-run never writes through one: give a folder of your own "
                           "(nothing was moved or started)\n")
    assert list(victim.iterdir()) == []
    assert (tmp_path / "wk" / "train.log").exists()
    _untouched(tmp_path, ["att2", "victim", "wk"])
