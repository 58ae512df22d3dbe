"""Every output of a command is judged for another user's links (and link loops) before any
lock, folder or file is made: an output through another user's dangling link in /tmp was
refused only after the lock's folder and lock file were made inside that user's folder by
following the link, and `aggregate` wrote `--csv` before refusing `--json`. A link that leads
back to itself is named as a loop, not as the lock folder's `File exists`."""

import os

import pytest

from cli_runs import REPO, SET, one_line, other_users_link, sacscale
from sacscale.commands import BadInput
from sacscale.commands._output_lock import holding_outputs

METRICS = sorted((REPO / "results" / SET / "metrics").glob("*.json"))


@pytest.fixture
def dangling(tmp_path):
    """(uid 1001's link in a sticky folder, the missing folder of hers it leads to)."""
    if os.getuid() != 0:
        pytest.skip("giving a link to another user needs root")
    hers = tmp_path / "evedir"
    hers.mkdir()
    os.chown(hers, 1001, 1001)
    return other_users_link(tmp_path / "shared" / "evedangle", hers / "nowhere"), hers / "nowhere"


def test_aggregate_writes_no_output_and_nothing_in_her_folder(tmp_path, dangling):
    link, hers = dangling
    csv = tmp_path / "o" / "s3.csv"
    done = sacscale("aggregate", *METRICS, "--csv", csv, "--json", link / "s.json")
    one_line(done, f"sacscale aggregate: error: argument --json: {link / 's.json'}: {link}: a symbolic link of "
                   "another user's (uid 1001) on the way to the output; an output is never written through one")
    assert not csv.exists() and not csv.parent.exists()
    assert not os.path.lexists(hers)


@pytest.mark.parametrize("folder", [False, True])
def test_holding_outputs_makes_no_lock_through_her_link(tmp_path, dangling, folder):
    link, hers = dangling
    mine = tmp_path / "mine" / "a.json"
    given = {"folders": (("--output-dir", link),)} if folder else {}
    outputs = () if folder else (("--json", link / "s.json"),)
    with pytest.raises(BadInput, match=rf"{link}: a symbolic link of another user's \(uid 1001\)"):
        with holding_outputs(("--csv", mine), *outputs, **given):
            pass
    assert not os.path.lexists(hers) and not mine.parent.exists()


@pytest.mark.parametrize("under", ["", "sub"])
def test_a_link_to_itself_is_named_a_loop(tmp_path, under):
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    json_path = loop / under / "s.json" if under else loop / "s.json"
    done = sacscale("aggregate", *METRICS, "--csv", tmp_path / "s.csv", "--json", json_path)
    one_line(done, f"sacscale aggregate: error: argument --json: {json_path}: {loop}: a loop of symbolic links")
    assert not (tmp_path / "s.csv").exists()
