"""The set's recorded commit, which the page tells its reader to check out to rebuild the
code, looked up in the git checkout verify runs from: one the checkout lacks gets a note
(not a failure: a set made from unpushed commits is legitimate); outside a git checkout,
nothing is said."""

import subprocess

import pytest
from set_copies import REPO, copy_committed_set, edit_record, remake_manifest

from sacscale.evidence import code_history
from sacscale.evidence.code_history import commit_notes
from sacscale.evidence.verify import verify

SET = "h200x1_shared_short"
UNKNOWN = "0123456789abcdef0123456789abcdef01234567"
FIELD = "environment.json project.commit"


def _git(*args, cwd):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin", "HOME": str(cwd)})


def _checkout(tmp_path):
    """A git checkout with one commit; returns (its folder, the commit)."""
    code = tmp_path / "code"
    code.mkdir()
    _git("init", "-q", cwd=code)
    (code / "a.txt").write_text("a\n")
    _git("add", "a.txt", cwd=code)
    _git("commit", "-q", "-m", "a", cwd=code)
    return code, code_history.git_output(["rev-parse", "HEAD"], code).strip()


def test_a_commit_the_checkout_lacks_gets_a_note(tmp_path):
    code, head = _checkout(tmp_path)
    assert commit_notes({UNKNOWN: FIELD, head: "shared_r1_n1_pool7: run.json code.commit"}, code) == [
        f"{FIELD} {UNKNOWN}: not in this checkout's repository (unpushed, or not this project's)"]


def test_a_commit_the_checkout_holds_gets_none(tmp_path):
    code, head = _checkout(tmp_path)
    assert commit_notes({head: FIELD}, code) == []


def test_outside_a_git_checkout_nothing_is_said(tmp_path):
    assert commit_notes({UNKNOWN: FIELD}, tmp_path) == []


def test_in_a_shallow_clone_the_note_says_so(tmp_path, monkeypatch):
    code, _ = _checkout(tmp_path)
    monkeypatch.setattr(code_history, "is_shallow", lambda code_root: True)
    assert commit_notes({UNKNOWN: FIELD}, code) == [
        f"{FIELD} {UNKNOWN}: not in this shallow clone's history (fetch it with --unshallow to check it out)"]


@pytest.mark.skipif(code_history.git_output(["rev-parse", "--git-dir"], REPO) is None
                    or code_history.is_shallow(REPO), reason="verify runs from a full git checkout here")
def test_verify_notes_a_set_commit_in_no_repository(tmp_path):
    root = copy_committed_set(tmp_path, SET)
    edit_record(root, "environment.json", lambda r: r["project"].update(commit=UNKNOWN))
    for run in (root / "runs").iterdir():
        edit_record(root, f"runs/{run.name}/run.json", lambda r: r["code"].update(commit=UNKNOWN))
    remake_manifest(root)
    result = verify(root, report_pending=True)
    assert f"{FIELD} {UNKNOWN}: not in this checkout's repository (unpushed, or not this project's)" \
           in result.notes, result.notes
    assert not [n for n in result.notes if "run.json code.commit" in n], result.notes  # one note for one commit
