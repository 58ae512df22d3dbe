"""A log directory reached through another local user's link is refused before anything is
written (a link planted in /tmp where a run's folder will be would have the run's files
written wherever its owner chose), and the report's refusal of a committed folder suggests a
folder nobody else can have made in advance, not a fixed name in /tmp."""

import os
import subprocess

import pytest

from cli_runs import REPO, other_users_link, sacscale
from sacscale.checks import InputError, check_log_dir


@pytest.fixture
def foreign_link(tmp_path):
    """`tmp_path/shared/run` a link of uid 1001's to an empty folder of ours (root only)."""
    if os.getuid() != 0:
        pytest.skip("giving a link to another user needs root")
    target = tmp_path / "ours"
    target.mkdir()
    return other_users_link(tmp_path / "shared" / "run", target)


@pytest.mark.parametrize("under", ["", "sub"])
def test_a_log_dir_through_another_users_link_is_refused(foreign_link, under):
    log_dir = foreign_link / under if under else foreign_link
    with pytest.raises(InputError, match=rf"--log-dir {log_dir}: {foreign_link}: a symbolic link of another "
                                         r"user's \(uid 1001\)"):
        check_log_dir(log_dir)


def test_a_log_dir_through_our_own_link_is_used(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "mine").symlink_to(tmp_path / "real")
    check_log_dir(tmp_path / "mine")
    check_log_dir(tmp_path / "mine" / "run")


def test_the_cli_names_the_link_and_makes_nothing(foreign_link):
    done = sacscale("train", "--log-dir", foreign_link, "--iterations", "1")
    assert done.returncode == 1, done.stderr  # as every log directory the file system refuses
    assert f"{foreign_link}: a symbolic link of another user's (uid 1001)" in done.stderr
    assert "Traceback" not in done.stderr
    assert list(foreign_link.iterdir()) == []


def test_the_report_of_a_committed_set_suggests_a_fresh_folder():
    tracked = subprocess.run(["git", "ls-files", "reports/h200x1_shared_short/report.md"], cwd=REPO,
                             capture_output=True, text=True).stdout
    if not tracked:
        pytest.skip("needs the committed sets of a git checkout")
    done = sacscale("report", "--run-set", REPO / "results" / "h200x1_shared_short")
    assert done.returncode == 2, done.stderr
    assert '--output-dir "$(mktemp -d)"' in done.stderr
    assert "/tmp/h200x1_shared_short-report" not in done.stderr

