"""The stored diff (source.diff) is `git diff HEAD` of the checkout at the recorded commit,
so it applies to that commit's tree. A substitute diff, its size and hash rewritten in
environment.json, was checked against nothing. A dirty tree's diff holds its change: an
empty one beside a dirty flag rebuilds nothing."""

import hashlib
import json

import pytest
from set_copies import REPO, made_current

from sacscale.evidence import code_history
from sacscale.evidence.stored_diff import diff_apply_findings, dirty_without_diff_problems
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


def test_a_dirty_tree_with_an_empty_stored_diff_is_named(work):
    """The record of a checkout whose change its diff missed (dirty, 0 bytes, nothing listed
    as left out), every record consistent: the commit and diff rebuild other code."""
    _substitute(work, b"")
    env_file = work / "environment.json"
    env = json.loads(env_file.read_text())
    env["project"].update(changed_files=["src/sacscale/usage.py"], changed_count=1)
    env["project"]["diff"]["untracked_files"] = []
    env_file.write_text(json.dumps(env, indent=2))
    made_current(work)
    result = verify(work)
    assert not result.ok
    assert ("set: code dirty: environment.json says True (src/sacscale/usage.py), its stored diff source.diff is "
            "empty (0 bytes) and lists no file left out of it: the commit and the diff cannot rebuild the code that "
            "ran (the pipeline's verify-env stores every change of a dirty tree)") in result.records, result.records
    assert not (result.changed or result.missing or result.extra or result.derived), result.problems()


def _dirty_empty(**project):
    diff = {"file": "source.diff", "bytes": 0, "untracked_files": []} | project.pop("diff", {})
    return {"project": {"commit": COMMIT, "dirty": True, "diff": diff} | project}


def test_a_dirty_tree_whose_change_is_listed_as_left_out_is_not_named():
    big = {"path": "src/sacscale/weights.bin", "bytes": 300_000, "sha256": "0" * 64}
    assert dirty_without_diff_problems(_dirty_empty(changed_files=["src/sacscale/weights.bin"], changed_count=1,
                                                    diff={"untracked_not_stored": [big]})) == []


def test_an_older_set_dirty_only_by_its_own_output_folder_is_not_named():
    """Sets made before the dirty flag counted only code: their own results/ folder made it true."""
    older = _dirty_empty(changed_files=["results/h200x1_ref_learning/"], changed_count=1)
    assert dirty_without_diff_problems(older) == []
    # a list cut short, or a code file among the outputs, does not say the code was as committed
    assert dirty_without_diff_problems(older | {"project": older["project"] | {"changed_count": 201}})
    mixed = _dirty_empty(changed_files=["results/x/", "results/y -> src/sacscale/usage.py"], changed_count=2)
    assert dirty_without_diff_problems(mixed)
