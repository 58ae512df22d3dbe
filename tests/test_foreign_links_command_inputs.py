"""A command's input file reached through another local user's symbolic link is refused in
one line naming it, before it is read. Before: run as root, `verify-env --plan` and
`plan-matrix --lscpu` followed another user's link (planted in a shared folder such as
/tmp) to a file only root can read, and plan-matrix quoted a line of it to the terminal."""

import os
import shutil

import pytest

from cli_runs import REPO, one_line, other_users_link, sacscale

TOPOLOGY = REPO / "tests" / "parallel" / "fixtures" / "topology"
SECRET = "root-only-secret-line"

pytestmark = pytest.mark.skipif(os.getuid() != 0, reason="giving a link to another user needs root")


@pytest.fixture
def private(tmp_path):
    """A file only root can read, one line of which plan-matrix would quote."""
    path = tmp_path / "private" / "shadow"
    path.parent.mkdir(mode=0o700)
    path.write_text(f"{SECRET}\n")
    path.chmod(0o600)
    return path


def _refused(done, link, out):
    one_line(done, f"{link}: another user's symbolic link (uid 1001); an input is never read through one")
    assert SECRET not in done.stdout + done.stderr
    assert not out.exists()


@pytest.mark.parametrize("option", ["--plan", "--lscpu"])
def test_an_input_that_is_another_users_link_is_not_read(tmp_path, private, option):
    link = other_users_link(tmp_path / "shared" / "input", private)
    out = tmp_path / "out.json"
    if option == "--plan":
        done = sacscale("verify-env", "--output", out, "--plan", link)
    else:
        done = sacscale("plan-matrix", "--lscpu", link, "--nvidia-smi-topo", TOPOLOGY / "h200x1.topo", "--output", out)
    _refused(done, link, out)


def test_a_folder_on_the_way_that_is_another_users_link_is_named(tmp_path, private):
    link = other_users_link(tmp_path / "shared" / "folder", private.parent)
    out = tmp_path / "out.json"
    done = sacscale("verify-env", "--output", out, "--plan", link / private.name)
    _refused(done, link, out)
    assert f"plan {link / private.name}: {link}: another user's" in done.stderr


def test_our_own_link_to_another_users_link_is_not_followed_either(tmp_path, private):
    theirs = other_users_link(tmp_path / "shared" / "input", private)
    ours = tmp_path / "mine.lscpu"
    ours.symlink_to(theirs)
    out = tmp_path / "out.json"
    done = sacscale("plan-matrix", "--lscpu", ours, "--nvidia-smi-topo", TOPOLOGY / "h200x1.topo", "--output", out)
    _refused(done, theirs, out)


def test_our_own_link_and_roots_are_followed(tmp_path):
    copy = tmp_path / "h200x1.lscpu"
    shutil.copy(TOPOLOGY / "h200x1.lscpu", copy)
    ours = tmp_path / "mine.lscpu"
    ours.symlink_to(copy)
    out = tmp_path / "out.json"
    done = sacscale("plan-matrix", "--lscpu", ours, "--nvidia-smi-topo", TOPOLOGY / "h200x1.topo", "--output", out)
    assert done.returncode == 0 and out.exists(), done.stderr


@pytest.mark.parametrize("through", ["run", "folder"])
def test_compare_learning_refuses_another_users_link_as_render_does(tmp_path, through):
    """compare-learning exited 1 (as for what the file system refuses) where render and
    evaluate exit 2 for the same refusal of the same link, and read a run through a link of
    another user's on the way to it."""
    run = tmp_path / "private" / "run"
    (run / "tb" / "rank0").mkdir(parents=True, mode=0o700)
    if through == "run":
        link = other_users_link(tmp_path / "shared" / "everun", run)
        given = link
    else:
        link = other_users_link(tmp_path / "shared" / "evedir", run.parent)
        given = link / "run"
    out = tmp_path / "cl.json"
    (tmp_path / "other" / "tb" / "rank0").mkdir(parents=True)
    done = sacscale("compare-learning", f"x={given}", f"c={tmp_path / 'other'}", "--output", out)
    said = f"{link}: another" if through == "run" else f"{given}: reached through {link}, another"
    one_line(done, f"sacscale compare-learning: error: {said} user's symbolic link (uid 1001); an input is never "
                   "read through one")
    assert not out.exists()
