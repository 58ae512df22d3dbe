"""An output is judged by the file system it lies on, not by a /dev prefix: a run set's
logs linked to /dev/shm (a tmpfs scratch folder) trained every run, then `manifest` refused
`--left-out-dir logs/<set>/left_out` as `a device or a stream of the system`. /dev's own
names (/dev/stdout, a device) are refused still."""

import os
import uuid
from pathlib import Path

import pytest

from cli_runs import REPO, sacscale
from sacscale.commands._system_outputs import reaches_the_system

SHM = Path("/dev/shm")
SET_FOLDER = REPO / "results" / "h200x1_shared_short"


@pytest.fixture
def scratch():
    if not SHM.is_dir() or os.stat(SHM).st_dev == os.stat("/dev").st_dev:
        pytest.skip("no tmpfs of its own at /dev/shm")
    folder = SHM / f"sacscale-test-{uuid.uuid4().hex}"
    folder.mkdir()
    yield folder
    for entry in sorted(folder.rglob("*"), reverse=True):
        entry.unlink() if entry.is_symlink() or entry.is_file() else entry.rmdir()
    folder.rmdir()


def test_a_folder_and_a_file_on_dev_shm_are_ordinary_outputs(scratch, tmp_path):
    (tmp_path / "logs").symlink_to(scratch)  # the pipeline's logs/<set> on the scratch disk
    assert not reaches_the_system(tmp_path / "logs" / "left_out")
    assert not reaches_the_system(scratch / "new" / "s.json")
    (scratch / "s.json").write_text("{}")
    assert not reaches_the_system(scratch / "s.json")


def test_a_link_on_dev_shm_to_a_stream_is_refused(scratch):
    (scratch / "out.json").symlink_to("/dev/stdout")
    assert reaches_the_system(scratch / "out.json")


@pytest.mark.parametrize("name", ["/dev/stdout", "/dev/null", "/dev/new.json", "/proc/self/fd/1", "/sys/x"])
def test_the_systems_own_names_are_refused(name):
    assert reaches_the_system(name)


def test_a_command_writes_its_output_through_a_link_to_dev_shm(scratch, tmp_path):
    (tmp_path / "logs").symlink_to(scratch)
    out = tmp_path / "logs" / "v.json"
    done = sacscale("verify", SET_FOLDER, "--no-metrics", "--output", out)
    assert "a device or a stream of the system" not in done.stderr, done.stderr
    assert done.returncode == 0 and (scratch / "v.json").is_file(), done.stderr


def test_a_name_through_proc_self_cwd_is_judged_where_it_leads(tmp_path, monkeypatch):
    """/proc/self/cwd/x is the working folder's x, as is a link of one's own to /proc/self
    followed by cwd/x: both ordinary outputs, not the kernel's (it was judged by its spelling)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "myproc").symlink_to("/proc/self")
    assert not reaches_the_system("/proc/self/cwd/tl1")
    assert not reaches_the_system(tmp_path / "myproc" / "cwd" / "tl2")
    assert reaches_the_system("/proc/self/fd/1") and reaches_the_system(tmp_path / "myproc" / "fd" / "1")
