"""Another process (any user's) mapping a file whose name is not UTF-8 (docs/faults.md
row 28): the start-up sweep of stale shared-memory entries reads every process's
/proc/PID/maps and died on it with a UnicodeDecodeError, so no run could start while such
a process lived and a stale entry was there. The names are now read as the file system
gives them. Run as root, the sweep also removed another user's stale entries (whose pid
may be of another PID namespace, a container sharing /dev/shm); it leaves them now."""

import os
import subprocess
import sys
import time

import pytest

from sacscale.collect.shm import clean_stale


def test_a_mapped_file_with_a_non_utf8_name_does_not_stop_the_sweep(tmp_path):
    odd = os.path.join(os.fsencode(tmp_path), b"\xff\xfe.bin")
    with open(odd, "wb") as fh:
        fh.write(b"x" * 4096)
    holder = subprocess.Popen([sys.executable, "-c", (
        "import mmap, sys, time\n"
        f"f = open({odd!r}, 'rb')\n"
        "m = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ)\n"
        "print('mapped', flush=True)\n"
        "time.sleep(60)\n")], stdout=subprocess.PIPE)
    try:
        assert holder.stdout.readline().strip() == b"mapped"
        dead = subprocess.Popen([sys.executable, "-c", "pass"])
        dead.wait()
        stale = tmp_path / f"sacscale_{dead.pid}_abcdef_r0_slots"
        stale.write_bytes(b"x")
        time.sleep(0.1)
        assert clean_stale(str(tmp_path)) == [stale.name]
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make another user's file (only root could remove it)")
def test_another_users_stale_entry_is_left_alone(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    theirs = tmp_path / f"sacscale_{dead.pid}_abcdef_r0_slots"
    theirs.write_bytes(b"x")
    os.chown(theirs, 65534, 65534)
    ours = tmp_path / f"sacscale_{dead.pid}_abcdef_r1_slots"
    ours.write_bytes(b"x")
    assert clean_stale(str(tmp_path)) == [ours.name]
    assert theirs.exists()
