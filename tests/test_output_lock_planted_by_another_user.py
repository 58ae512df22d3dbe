"""An output's lock file (`.<name>.lock` beside it) that another user planted in a shared
sticky folder such as /tmp. Before: refused with `not a plain file of this user's with a
single name; remove it`, which said neither whose it was nor that the place is unsafe (and
only root can remove another user's file there). Now the refusal names the other user by
uid and says why the place is refused: who could plant the lock could plant the output."""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from cli_runs import REPO, SET, one_line, sacscale
from sacscale.locks import LockError, lock_beside

pytestmark = pytest.mark.skipif(os.getuid() != 0, reason="giving a file to another user needs root")

METRICS = sorted((REPO / "results" / SET / "metrics").glob("*.json"))


def planted(folder, name, uid=1001):
    folder.mkdir(mode=0o1777)
    folder.chmod(0o1777)  # sticky and world-writable, as /tmp is
    lock = folder / name
    lock.touch()
    os.chown(lock, uid, uid)
    return lock


def says(lock, uid=1001):
    return (f"lock file {lock}: belongs to uid {uid}, another user, who put it in a folder they can write in, where "
            "they could plant the output as well; write it in a folder of your own")


def test_aggregate_names_the_user_who_planted_its_lock(tmp_path):
    lock = planted(tmp_path / "w", ".s.csv.lock")
    csv = tmp_path / "w" / "s.csv"
    one_line(sacscale("aggregate", *METRICS, "--csv", csv, "--json", tmp_path / "w" / "s.json"),
             f"sacscale aggregate: error: --csv {csv}: cannot lock it to write it ({says(lock)}); nothing was written")
    assert sorted(p.name for p in (tmp_path / "w").iterdir()) == [".s.csv.lock"]
    assert os.stat(lock).st_uid == 1001  # neither used nor removed


def test_the_lock_is_not_taken(tmp_path):
    lock = planted(tmp_path / "w", ".x.lock", uid=1002)
    with pytest.raises(LockError) as refused, lock_beside(tmp_path / "w" / "x"):
        pass
    assert str(refused.value) == says(lock, uid=1002)
    assert lock.read_bytes() == b""


@pytest.fixture
def shared_tmp():
    """A folder in /tmp that another user can reach (pytest's own are root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="sacscale-planted-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder)


def test_a_user_who_cannot_open_it_is_told_the_same(shared_tmp):
    """Not root: another user's 0600 file cannot even be opened (`permission denied` named
    no one); the same line names its owner."""
    tmp_path = shared_tmp
    lock = planted(tmp_path / "w", ".x.lock", uid=1002)
    lock.chmod(0o600)
    code = ("import os, sys; from pathlib import Path; from sacscale.locks import LockError, lock_beside\n"
            "os.setgid(1001); os.setuid(1001)\n"
            "try:\n    lock_beside(Path(sys.argv[1])).__enter__()\nexcept LockError as exc:\n    print(exc)\n")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "w" / "x")], capture_output=True, text=True,
                          timeout=60)
    assert done.stdout.strip() == says(lock, uid=1002), done.stderr
