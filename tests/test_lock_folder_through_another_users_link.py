"""A lock folder named through another user's symbolic link in the middle of its path
(SACSCALE_LOCK_DIR=/tmp/l/sub, /tmp/l hers, leading to root's folder). Before: accepted, as
the walk over the folders above stopped quietly at her link and judged only where it led;
she could then re-point it, and the same path, which Inductor and matplotlib read again and
again, led into a folder of hers (her compiled kernels loaded by root). Now such a link is
refused in one line naming it and its owner, before anything is made; a link of this user's
own (a ~/scratch link) or of root's on the way is followed as before."""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from cli_runs import one_line, other_users_link, record_run_with_machine_lock
from sacscale.atomic import others_can_swap
from sacscale.locks import LockSettingError, private_folder

pytestmark = pytest.mark.skipif(os.getuid() != 0, reason="a link of another user's needs root to make")


def _through_her_link(tmp_path, made=True):
    """(lock folder named through her link, root's folder it reaches): `<stk>/l` is uid 1001's
    link, in a sticky world-writable folder as /tmp, to root's 0700 folder holding `sub`."""
    target = tmp_path / "x"
    target.mkdir(mode=0o700)
    if made:
        (target / "sub").mkdir(mode=0o700)
    link = other_users_link(tmp_path / "stk" / "l", target)
    return link / "sub", target


def _says(link):
    return f"is reached through {link}, a symbolic link its owner can re-point at any time: uid 1001, another user"


@pytest.mark.parametrize("made", [True, False])
def test_a_private_folder_through_her_link_is_refused_and_nothing_made(tmp_path, monkeypatch, made):
    folder, target = _through_her_link(tmp_path, made)
    monkeypatch.setenv("SACSCALE_LOCK_DIR", str(folder))
    with pytest.raises(LockSettingError) as refused:
        private_folder("torchinductor")
    assert str(refused.value) == (
        f"lock folder {folder} {_says(folder.parent)}; another user could plant, hold or swap its files: remove it, "
        "or set SACSCALE_LOCK_DIR to a folder of your own (mode 0700)")
    assert [p.name for p in target.rglob("*")] == (["sub"] if made else [])


def test_the_report_refuses_a_lock_folder_through_her_link_in_one_line(tmp_path):
    folder, target = _through_her_link(tmp_path)
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "sacscale.cli", "report", "--summary", "s.json", "--metrics",
                           "m.json", "--output-md", out / "r.md", "--output-html", out / "r.html", "--figures-dir",
                           out / "figures"], capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": ":".join(sys.path),
                               "SACSCALE_LOCK_DIR": str(folder)})
    one_line(done, f"lock folder {folder} {_says(folder.parent)}; ")
    assert not out.exists() and list((target / "sub").iterdir()) == []  # no matplotlib/ made through it


def test_the_machine_lock_folder_through_her_link_is_refused_as_bad_input(tmp_path):
    folder, target = _through_her_link(tmp_path)
    done = record_run_with_machine_lock(tmp_path, {"SACSCALE_MACHINE_LOCK_DIR": str(folder)})
    one_line(done, f"lock folder {folder} {_says(folder.parent)}; ")
    assert list((target / "sub").iterdir()) == [] and not (tmp_path / "elsewhere").exists()


def test_a_folder_through_her_link_is_one_others_can_swap(tmp_path):
    """The rule every output folder and private folder is judged by names the link too."""
    folder, _ = _through_her_link(tmp_path)
    assert others_can_swap(folder) == _says(folder.parent)


@pytest.fixture
def shared_tmp():
    """A folder in /tmp that another user can reach (pytest's own are root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="sacscale-linked-locks-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder)


# run as uid 1001: its lock folder's private folder, made through `link`
AS_USER = ("import os, sys; from sacscale.locks import private_folder\n"
           "os.setgid(1001); os.setuid(1001)\nprint(private_folder('matplotlib'))\n")


@pytest.mark.parametrize("owner", [1001, 0], ids=["the users own link", "roots link"])
def test_a_link_of_the_users_own_or_of_roots_on_the_way_is_followed(shared_tmp, owner):
    home, data = shared_tmp / "home", shared_tmp / "data"
    for folder in (home, data):
        folder.mkdir(mode=0o700)
        os.chown(folder, 1001, 1001)
    home.chmod(0o755)
    link = home / "scratch"
    link.symlink_to(data)  # ~/scratch -> the user's own folder on another disk
    os.lchown(link, owner, owner)
    folder = link / "locks"
    done = subprocess.run([sys.executable, "-c", AS_USER], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "SACSCALE_LOCK_DIR": str(folder)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(folder / "matplotlib")
    made = data / "locks" / "matplotlib"
    assert made.stat().st_uid == 1001 and made.stat().st_mode & 0o777 == 0o700
