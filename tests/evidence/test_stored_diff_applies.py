"""The stored diff (source.diff) is `git diff HEAD` of the checkout at the recorded commit,
so it applies to that commit's tree. A substitute diff, its size and hash rewritten in
environment.json, was checked against nothing."""

import hashlib
import json

import pytest
from set_copies import REPO, made_current

from sacscale.evidence import code_history
from sacscale.evidence.stored_diff import diff_apply_findings
from sacscale.evidence.verify import verify

COMMIT = "881e5c75bedf4c78f73efe3bce235ce4e39aca7f"  # h200x1_shared_short's
OTHER_TREES_CHANGE = b"""diff --git a/README.md b/README.md
--- a/README.md
+++ b/README.md
@@ -1 +1 @@
-# not this commit's first line
+# sacscale
"""


def _substitute(root, data: bytes) -> None:
    (root / "source.diff").write_bytes(data)
    env_file = root / "environment.json"
    env = json.loads(env_file.read_text())
    env["project"]["diff"].update(bytes=len(data), sha256=hashlib.sha256(data).hexdigest())
    env_file.write_text(json.dumps(env, indent=2))


@pytest.mark.skipif(code_history.commit_time(COMMIT) is None, reason="this checkout lacks the set's commit")
def test_a_substitute_diff_that_does_not_apply_to_the_commit_is_named(work):
    _substitute(work, OTHER_TREES_CHANGE)
    made_current(work)
    assert ("set: stored diff source.diff does not apply to commit 881e5c75bedf (error: patch failed: README.md:1): "
            "it is not the change of that commit's tree that ran, and the page's rebuild line would not rebuild "
            "the code") in verify(work).records


def _env(commit):
    return {"project": {"commit": commit, "dirty": True, "diff": {"file": "source.diff"}}}


def test_a_commit_this_checkout_lacks_is_a_note(tmp_path):
    (tmp_path / "source.diff").write_bytes(OTHER_TREES_CHANGE)
    problems, notes = diff_apply_findings(tmp_path, _env("0" * 40), REPO)
    assert problems == []
    assert len(notes) == 1 and notes[0].startswith("source.diff: not checked against commit 000000000000: it is not "
                                                   "in this"), notes


def test_outside_a_git_checkout_a_note(tmp_path):
    code = tmp_path / "code"
    code.mkdir()
    (tmp_path / "source.diff").write_bytes(OTHER_TREES_CHANGE)
    assert diff_apply_findings(tmp_path, _env(COMMIT), code) == (
        [], [f"source.diff: not checked against commit 881e5c75bedf: this code ({code}) is not in a git checkout"])


def test_an_empty_diff_needs_no_check(tmp_path):
    (tmp_path / "source.diff").write_bytes(b"")
    assert diff_apply_findings(tmp_path, _env("0" * 40), REPO) == ([], [])
