"""`sacscale record-run --log PATH` opens the run's log as a new file at PATH, whatever stood
there removed first. Before, PATH was judged by nothing: another user's file in a folder she
controls was deleted and root's log written in its place, a FIFO or a device node (a copy of
/dev/null) was deleted and replaced, and the run went on. Now --log is judged with the other
folders, before anything is moved or started: its folder as theirs (another user's, or one
open to others, refused), and at its name nothing, a plain file or a link of ours (replaced,
never written through). Anything else is one line naming it, exit status 2, nothing removed."""

import os
import stat
import subprocess
import sys

import pytest

from cli_runs import REPO, one_line, sacscale

OTHER = 1001
as_root = pytest.mark.skipif(os.getuid() != 0, reason="a file or folder of another user, a device node: root only")


def _record_run(cwd, log):
    marker = cwd / "ran"
    return sacscale("record-run", "--run-dir", "rr/runs/r", "--work-dir", "rr/runs/.r.partial", "--attic", "rr/at",
                    "--timeout", "30", "--log", log, "--", sys.executable, "-c", f"open({str(marker)!r}, 'w')",
                    cwd=cwd)


def _nothing_started(cwd):
    assert not (cwd / "ran").exists() and not (cwd / "rr").exists()


def test_a_fifo_at_the_logs_name_is_refused_and_left(tmp_path):
    fifo = tmp_path / "fifo.log"
    os.mkfifo(fifo)
    one_line(_record_run(tmp_path, fifo), f"sacscale record-run: --log {fifo}: a FIFO, not a file; the log "
                                          "replaces the file at its name, never a device, FIFO, socket or folder")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    _nothing_started(tmp_path)


def test_a_folder_at_the_logs_name_is_refused(tmp_path):
    (tmp_path / "d.log").mkdir()
    one_line(_record_run(tmp_path, tmp_path / "d.log"), "d.log: a folder, not a file")
    _nothing_started(tmp_path)


@as_root
def test_a_device_at_the_logs_name_is_refused_and_left(tmp_path):
    null = tmp_path / "null"
    os.mknod(null, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # a copy of /dev/null
    one_line(_record_run(tmp_path, null), f"--log {null}: a character device, not a file")
    assert stat.S_ISCHR(os.lstat(null).st_mode)
    _nothing_started(tmp_path)


@as_root
def test_a_log_in_a_folder_another_user_controls_is_refused_and_their_file_kept(tmp_path):
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o777)
    theirs.chmod(0o777)
    os.chown(theirs, OTHER, OTHER)
    log = theirs / "run1.log"
    log.write_text("eve's data")
    os.chown(log, OTHER, OTHER)
    done = _record_run(tmp_path, log)
    one_line(done, f"sacscale record-run: --log {log}: its folder {theirs}: belongs to uid {OTHER}, another user")
    assert log.read_text() == "eve's data" and os.stat(log).st_uid == OTHER
    _nothing_started(tmp_path)


@as_root
def test_another_users_file_in_a_folder_of_ours_is_refused_and_kept(tmp_path):
    log = tmp_path / "run1.log"
    log.write_text("eve's data")
    os.chown(log, OTHER, OTHER)
    one_line(_record_run(tmp_path, log), f"--log {log}: belongs to uid {OTHER}, another user")
    assert log.read_text() == "eve's data"
    _nothing_started(tmp_path)


def test_a_link_of_ours_at_the_logs_name_is_replaced_never_written_through(tmp_path):
    target = tmp_path / "kept.txt"
    target.write_text("not the log")
    (tmp_path / "r.log").symlink_to(target)
    done = _record_run(tmp_path, tmp_path / "r.log")
    assert done.returncode == 1, done.stderr  # the command wrote no event file: the run failed, but ran
    assert target.read_text() == "not the log"
    assert not (tmp_path / "r.log").is_symlink() and "run_training:" in (tmp_path / "r.log").read_text()


def test_an_old_log_of_ours_is_replaced(tmp_path):
    (tmp_path / "r.log").write_text("an earlier run's log")
    assert _record_run(tmp_path, tmp_path / "r.log").returncode == 1
    assert "an earlier run's log" not in (tmp_path / "r.log").read_text()


def test_a_log_added_to_a_committed_run_set_is_refused(tmp_path):
    committed = next(p for p in sorted((REPO / "results").iterdir()) if (p / "MANIFEST.sha256").is_file())
    log = committed / "r.log"
    try:
        one_line(_record_run(tmp_path, log), f"argument --log: {log} is inside results/{committed.name}, a "
                                             "committed run set")
    finally:
        if log.exists() and not subprocess.run(["git", "ls-files", "--error-unmatch", str(log)], cwd=REPO,
                                               capture_output=True).returncode == 0:
            log.unlink()
    _nothing_started(tmp_path)
