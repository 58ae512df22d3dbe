"""Another user's own file or link standing at an output's name in a sticky shared folder
(/tmp, /dev/shm). Before: root's write renamed its output over it without a word (`render
--output /dev/shm/p66eve.mp4` over eve's file: exit 0, her file gone), which only root can
do there (any other user's rename is refused). Now every writer refuses it, before anything
is made, in one line naming the option and the owner, exit 2, her entry as it was; a file
of this user's or root's at the name is replaced as before."""

import errno
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from cli_runs import REPO, SET, one_line, other_users_link, sacscale
from sacscale.atomic import move_into_place, temporary_path, write_json
from sacscale.commands import BadInput
from sacscale.commands._output_lock import holding_outputs
from sacscale.evidence.scope import LeftOutTaken, _refuse_taken

pytestmark = pytest.mark.skipif(os.getuid() != 0, reason="giving a file to another user needs root")

RESULTS = REPO / "results" / SET
METRICS = sorted((RESULTS / "metrics").glob("*.json"))


def _says(path, kind="a plain file", uid=1001):
    return (f"{path}: belongs to uid {uid}, another user ({kind}), not this user's to replace; write the output "
            "elsewhere, or have its owner remove it")


def hers(folder: Path, name: str, uid: int = 1001) -> Path:
    """A file of uid `uid`'s in `folder`, made sticky and world-writable as /tmp is."""
    folder.mkdir(mode=0o1777, exist_ok=True)
    folder.chmod(0o1777)
    path = folder / name
    path.write_text("evedata\n")
    os.chown(path, uid, uid)
    return path


def untouched(path: Path, uid: int = 1001) -> None:
    assert path.read_text() == "evedata\n" and path.stat().st_uid == uid
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]  # no lock, no temporary left


def test_render_leaves_her_file(tmp_path):
    video = hers(tmp_path / "shm", "p66eve.mp4")
    done = sacscale("render", RESULTS / "runs" / "shared_r1_n1_pool7", "--output", video)
    one_line(done, f"sacscale render: error: argument --output: {_says(video)}")
    untouched(video)


@pytest.mark.parametrize("argv, option", [
    (["verify", RESULTS, "--output", "{out}"], "--output"),
    (["aggregate", *METRICS, "--csv", "{tmp}/s.csv", "--json", "{out}"], "--json"),
    (["analyze-run", RESULTS / "runs" / "shared_r1_n1_pool7", "--output", "{out}"], "--output"),
])
def test_other_writers_leave_her_file(tmp_path, argv, option):
    out = hers(tmp_path / "shared", "out.json")
    argv = [str(a).replace("{out}", str(out)).replace("{tmp}", str(tmp_path)) for a in argv]
    one_line(sacscale(*argv), f"error: argument {option}: {_says(out)}")
    untouched(out)
    assert not (tmp_path / "s.csv").exists()  # refused before any output was written


def test_her_link_is_not_replaced_either(tmp_path):
    target = tmp_path / "root.json"
    target.write_text("{}\n")
    link = other_users_link(tmp_path / "shared" / "v.json", target)
    done = sacscale("verify", RESULTS, "--output", link)
    one_line(done, f"sacscale verify: error: argument --output: {_says(link, 'a symbolic link')}")
    assert link.is_symlink() and os.lstat(link).st_uid == 1001 and target.read_text() == "{}\n"


def test_the_reports_page_leaves_her_file(tmp_path):
    page = hers(tmp_path / "shared", "report.md")
    done = sacscale("report", "--run-set", RESULTS, "--output-dir", page.parent)
    one_line(done, f"sacscale report: {_says(page)}")
    untouched(page)


def test_holding_outputs_refuses_it_before_any_lock(tmp_path):
    out = hers(tmp_path / "shared", "e.json", uid=1002)
    with pytest.raises(BadInput) as refused, holding_outputs(("--output", out)):
        pass
    assert str(refused.value) == f"--output {out}: {_says(out, uid=1002)[len(str(out)) + 2:]}; nothing was written"
    untouched(out, uid=1002)


def test_the_write_refuses_it_at_its_start(tmp_path):
    out = hers(tmp_path / "shared", "w.json")
    with pytest.raises(PermissionError) as refused:
        write_json(out, {"a": 1})
    assert refused.value.errno == errno.EPERM and refused.value.filename == str(out)
    untouched(out)


def test_her_file_put_there_while_the_output_was_written_stays(tmp_path):
    """In a sticky folder she can make a file at the name the write is about to take."""
    out = tmp_path / "shared" / "late.json"
    out.parent.mkdir(mode=0o1777)
    tmp = temporary_path(out)
    try:
        hers(out.parent, out.name)
        with pytest.raises(PermissionError):
            move_into_place(tmp, out)
    finally:
        tmp.unlink(missing_ok=True)
    untouched(out)


def test_a_left_out_policy_of_hers_is_not_replaced(tmp_path):
    """Even holding the very bytes of this set's policy: replaced, it would be root's."""
    policy = hers(tmp_path / "left_out", "final.pt")
    with pytest.raises(LeftOutTaken, match="belongs to uid 1001, another user"):
        _refuse_taken(policy, "r1", {hashlib.sha256(b"evedata\n").hexdigest()})
    untouched(policy)


def test_own_and_roots_files_are_still_replaced(tmp_path):
    mine = tmp_path / "mine.json"
    mine.write_text("old\n")
    write_json(mine, {"a": 1})
    assert mine.read_text() == '{\n  "a": 1\n}\n'


@pytest.fixture
def folder_of_hers():
    """A folder of uid 1001's in /tmp that she can reach (pytest's own are root's alone)."""
    top = Path(tempfile.mkdtemp(prefix="sacscale-owner-"))
    top.chmod(0o755)
    folder = top / "hers"
    folder.mkdir()
    os.chown(folder, 1001, 1001)
    yield folder
    shutil.rmtree(top)


def test_a_user_replaces_roots_file_and_her_own_in_her_folder(folder_of_hers):
    roots = folder_of_hers / "root.json"
    roots.write_text("root\n")
    own = folder_of_hers / "own.json"
    own.write_text("own\n")
    os.chown(own, 1001, 1001)
    code = ("import os, sys; from sacscale.atomic import write_json\n"
            "os.setgid(1001); os.setuid(1001)\n"
            "for path in sys.argv[1:]:\n    write_json(path, {'by': 1001})\n")
    done = subprocess.run([sys.executable, "-c", code, str(roots), str(own)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    for path in (roots, own):
        assert path.read_text() == '{\n  "by": 1001\n}\n' and path.stat().st_uid == 1001
