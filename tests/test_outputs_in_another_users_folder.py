"""Every writer, not only the CLI's output check, refuses a folder of another user's: the
pipeline's plan (written by the workflow itself, with no command's check) went into her
folder at results/<set>. What goes into her folder is hers to replace or redirect."""

import errno
import os

import pytest

from cli_runs import one_line, sacscale
from sacscale.atomic import write_json

pytestmark = pytest.mark.skipif(os.getuid() != 0, reason="giving a folder to another user needs root")


@pytest.fixture
def her_folder(tmp_path):
    folder = tmp_path / "hers"
    folder.mkdir(mode=0o777)
    folder.chmod(0o777)
    os.chown(folder, 1001, 1001)
    return folder


def test_a_write_into_her_folder_is_refused_naming_it(her_folder):
    with pytest.raises(OSError) as raised:
        write_json(her_folder / "plan.json", {"preset": "cpu"})
    assert raised.value.errno == errno.EPERM and raised.value.filename == str(her_folder)
    assert "belongs to uid 1001, another user (a folder), not this user's to write into" in str(raised.value)
    assert list(her_folder.iterdir()) == []


def test_through_a_link_of_ours_too(her_folder, tmp_path):
    (tmp_path / "mine").symlink_to(her_folder)
    with pytest.raises(OSError, match="belongs to uid 1001"):
        write_json(tmp_path / "mine" / "plan.json", {})
    assert list(her_folder.iterdir()) == []


def test_roots_shared_folder_and_our_own_are_written(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o1777)
    write_json(shared / "a.json", {})
    write_json(tmp_path / "b.json", {})
    assert (shared / "a.json").is_file() and (tmp_path / "b.json").is_file()


def test_train_into_a_root_folder_others_may_write_in_is_refused(tmp_path):
    run = tmp_path / "tlog"
    run.mkdir()
    run.chmod(0o1777)  # root's, sticky: others may still add their own run.json beside the run's
    done = sacscale("train", "--log-dir", run, "--iterations", "1")
    one_line(done, f"--log-dir {run}: is writable by other users (mode 1777), who could put their own files "
                   "among the run's")
    assert list(run.iterdir()) == []
