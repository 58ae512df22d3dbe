"""Temporary files a writer killed by SIGKILL left (docs/faults.md row 28): `report`
killed while drawing left `figures/.cumulative_steps.tmpPID.THREAD.png`, and every later
report kept it. The next writer of that output removes it as it names its own temporary
file (sacscale.atomic.temporary_path, which every writer uses): this user's, of a dead
process; a live process's or another user's are left alone."""

import os
import subprocess
import sys
import threading

import pytest

from sacscale.atomic import atomic_write_bytes


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_a_dead_writers_temporary_file_goes_with_the_next_write(tmp_path):
    out = tmp_path / "scaling_bars.png"
    stale = tmp_path / f".scaling_bars.tmp{dead_pid()}.140489074396032.png"
    stale.write_bytes(b"half a figure")
    live = tmp_path / f".scaling_bars.tmp{os.getpid()}.{threading.get_ident() + 1}.png"
    live.write_bytes(b"another thread's, still writing")
    other = tmp_path / f".other.tmp{dead_pid()}.1.png"  # another output's: not this write's to judge
    other.write_bytes(b"x")
    atomic_write_bytes(out, b"figure")
    assert out.read_bytes() == b"figure"
    assert not stale.exists()
    assert live.exists() and other.exists()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".scaling_bars.tmp")) == [live.name]


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make a file of another user")
def test_another_users_temporary_file_is_left_alone(tmp_path):
    out = tmp_path / "report.md"
    theirs = tmp_path / f".report.tmp{dead_pid()}.1.md"
    theirs.write_bytes(b"x")
    os.chown(theirs, 65534, 65534)
    atomic_write_bytes(out, b"report")
    assert theirs.exists()
