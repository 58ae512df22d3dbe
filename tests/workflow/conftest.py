import errno
import os
import shlex
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
# tests/synthetic_runs.py (synthetic event files) and pipeline_helpers.py
sys.path[:0] = [str(HERE.parent), str(HERE)]

from pipeline_helpers import copy_workflow  # noqa: E402

from sacscale.pipeline import moves  # noqa: E402


@pytest.fixture
def workflow_dir(tmp_path):
    return copy_workflow(tmp_path / "wf")


@pytest.fixture
def other_disk(tmp_path):
    """A folder on another file system than tmp_path's (/dev/shm), removed afterwards."""
    shm = Path("/dev/shm")
    if not shm.is_dir() or not os.access(shm, os.W_OK) or shm.stat().st_dev == tmp_path.stat().st_dev:
        pytest.skip("no writable /dev/shm on a file system other than the test's folder")
    folder = shm / f"sacscale-test-{uuid.uuid4().hex}"
    folder.mkdir()
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def no_rename_across(monkeypatch):
    """The rename refusing, as across file systems, any move out of a folder named `from`."""
    real = moves.rename_into_place

    def replace(source, target):
        if "from" in Path(source).parts:
            raise OSError(errno.EXDEV, os.strerror(errno.EXDEV), str(source), None, str(target))
        return real(source, target)

    monkeypatch.setattr(moves, "rename_into_place", replace)


@pytest.fixture
def private_mounts(tmp_path):
    """Skips where a mount namespace with its own tmpfs at tmp_path cannot be made (no root, no
    `unshare -m`): what the machine-wide lock's tests need to show a private /tmp."""
    if os.geteuid() != 0:
        pytest.skip("a mount namespace with its own tmpfs needs root here")
    probe = subprocess.run(["unshare", "-m", "sh", "-c", f"mount -t tmpfs tmpfs {shlex.quote(str(tmp_path))}"],
                           capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        pytest.skip(f"unshare -m with a tmpfs refused here: {probe.stderr.strip()}")
