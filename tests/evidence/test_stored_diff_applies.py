"""The stored diff (source.diff) is `git diff HEAD` of the checkout at the recorded commit,
so it applies to that commit's tree. A substitute diff, its size and hash rewritten in
environment.json, was checked against nothing. A dirty tree's diff holds its change: an
empty one beside a dirty flag rebuilds nothing, judged by the file the set holds (a size
recorded as 0.0 or false passed), and a change listed by a name git never gives
(`results/../src/...`) is not taken for an output folder's. A record listing a changed source
file is dirty, and its stored diff holds each such file or lists it as left out."""

import hashlib
import json

import pytest
from set_copies import REPO, made_current

from sacscale.evidence import code_history
from sacscale.evidence.stored_diff import (
    diff_apply_findings,
    diff_findings,
    dirty_without_diff_problems,
    listed_change_problems,
    listed_name_problems,
)
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


DIRTY_EMPTY = ("set: code dirty: environment.json says True ({}), its stored diff source.diff is empty (0 bytes) "
               "and lists no file left out of it: the commit and the diff cannot rebuild the code that ran (the "
               "pipeline's verify-env stores every change of a dirty tree)")


def _dirty_with_empty_diff(work, changed: str, **diff):
    """The set's record edited to a dirty tree whose stored diff is empty, every record consistent."""
    _substitute(work, b"")
    env_file = work / "environment.json"
    env = json.loads(env_file.read_text())
    env["project"].update(changed_files=[changed], changed_count=1)
    env["project"]["diff"].update(untracked_files=[], **diff)
    env_file.write_text(json.dumps(env, indent=2))
    made_current(work)
    return verify(work)


def test_a_dirty_tree_with_an_empty_stored_diff_is_named(work):
    """The record of a checkout whose change its diff missed (dirty, 0 bytes, nothing listed
    as left out), every record consistent: the commit and diff rebuild other code."""
    result = _dirty_with_empty_diff(work, "src/sacscale/usage.py")
    assert not result.ok
    assert DIRTY_EMPTY.format("src/sacscale/usage.py") in result.records, result.records
    assert not (result.changed or result.missing or result.extra or result.derived), result.problems()


@pytest.mark.parametrize("size", [0.0, False], ids=["float", "bool"])
def test_an_empty_diff_whose_size_is_recorded_as_another_kind_is_named(work, size):
    """0.0 == 0 and false == 0 in Python: the size compared equal and the dirty check skipped it."""
    result = _dirty_with_empty_diff(work, "src/sacscale/cli.py", bytes=size)
    assert not result.ok
    assert DIRTY_EMPTY.format("src/sacscale/cli.py") in result.records, result.records
    assert (f"set: stored diff: environment.json project.diff.bytes is {str(size)!r} ({type(size).__name__}), not a "
            "whole number: the pipeline records 'source.diff''s size in bytes") in result.records, result.records


def test_a_change_named_through_an_output_folder_is_named(work):
    """`results/../src/sacscale/cli.py` is code: its first word is not its folder."""
    result = _dirty_with_empty_diff(work, "results/../src/sacscale/cli.py")
    assert not result.ok
    assert DIRTY_EMPTY.format("results/../src/sacscale/cli.py") in result.records, result.records
    assert ("set: changed files: environment.json project.changed_files lists 'results/../src/sacscale/cli.py', not "
            "a name git gives (relative to the checkout, with no '.', '..' or empty part): the file it names is not "
            "where it reads, and the record was not written by the pipeline") in result.records, result.records


@pytest.mark.parametrize("name", ["results/../src/x.py", "./results/x", "/results/x", "results//x", "results/./x",
                                  "", "results/x -> ../src/y.py", "results/x//"])
def test_names_git_does_not_give_are_named_in_every_list(empty_diff, name):
    last = name.split(" -> ")[-1]
    big = {"path": last, "bytes": 300_000, "sha256": "0" * 64}
    env = _dirty_empty(changed_files=[name], changed_count=1, diff={"untracked_files": [last],
                                                                    "untracked_not_stored": [big]})
    assert [line.split(" lists ")[0] for line in listed_name_problems(env)] == [
        f"set: changed files: environment.json project.{field}"
        for field in ("changed_files", "diff.untracked_files", "diff.untracked_not_stored")]
    # nor is such a change taken for an output folder's
    assert dirty_without_diff_problems(empty_diff, _dirty_empty(changed_files=[name], changed_count=1))


def test_names_git_gives_pass():
    names = ["src/sacscale/usage.py", "results/h200x1_ref/", "vendor/lib/", "a\\xff b.py", "old.py -> new.py", "..x/y."]
    assert listed_name_problems(_dirty_empty(changed_files=names, changed_count=len(names),
                                             diff={"untracked_files": names})) == []


def _dirty_empty(**project):
    diff = {"file": "source.diff", "bytes": 0, "untracked_files": []} | project.pop("diff", {})
    return {"project": {"commit": COMMIT, "dirty": True, "diff": diff} | project}


@pytest.fixture
def empty_diff(tmp_path):
    (tmp_path / "source.diff").write_bytes(b"")
    return tmp_path


def test_an_empty_stored_file_is_judged_whatever_size_the_record_gives(empty_diff, tmp_path):
    """The file the set holds is what rebuilds the code, not the number beside it."""
    env = _dirty_empty(changed_files=["src/sacscale/cli.py"], changed_count=1, diff={"bytes": 123})
    assert dirty_without_diff_problems(empty_diff, env) == [DIRTY_EMPTY.format("src/sacscale/cli.py")]
    (empty_diff / "source.diff").unlink()
    assert "its stored diff source.diff is absent from the set and" in dirty_without_diff_problems(empty_diff, env)[0]
    assert diff_findings(empty_diff, _dirty_empty(diff={"bytes": 0.0})) == ([
        "set: stored diff: environment.json project.diff.bytes is '0.0' (float), not a whole number: the pipeline "
        "records 'source.diff''s size in bytes"], [])


def test_a_dirty_tree_whose_change_is_listed_as_left_out_is_not_named(empty_diff):
    big = {"path": "src/sacscale/weights.bin", "bytes": 300_000, "sha256": "0" * 64}
    assert dirty_without_diff_problems(empty_diff, _dirty_empty(changed_files=["src/sacscale/weights.bin"],
                                                                changed_count=1,
                                                                diff={"untracked_not_stored": [big]})) == []


def test_an_older_set_dirty_only_by_its_own_output_folder_is_not_named(empty_diff):
    """Sets made before the dirty flag counted only code: their own results/ folder made it true."""
    older = _dirty_empty(changed_files=["results/h200x1_ref_learning/"], changed_count=1)
    assert dirty_without_diff_problems(empty_diff, older) == []
    # a list cut short, or a code file among the outputs, does not say the code was as committed
    assert dirty_without_diff_problems(empty_diff, older | {"project": older["project"] | {"changed_count": 201}})
    mixed = _dirty_empty(changed_files=["results/x/", "results/y -> src/sacscale/usage.py"], changed_count=2)
    assert dirty_without_diff_problems(empty_diff, mixed)


NEW_USAGE = b"""diff --git a/src/sacscale/usage/__init__.py b/src/sacscale/usage/__init__.py
new file mode 100644
index 0000000..1111111
--- /dev/null
+++ b/src/sacscale/usage/__init__.py
@@ -0,0 +1 @@
+EVIL = 1
"""


def test_a_clean_record_that_lists_a_changed_source_file_is_named(work):
    """The reviewer's V1: the record a link to a folder made, clean, listing it, storing nothing."""
    _substitute(work, b"")
    env_file = work / "environment.json"
    env = json.loads(env_file.read_text())
    env["project"].update(dirty=False, changed_files=["src/sacscale/usage"], changed_count=1)
    env["project"]["diff"].update(untracked_files=["src/sacscale/usage"])
    env_file.write_text(json.dumps(env, indent=2))
    made_current(work)
    records = verify(work).records
    assert ("set: code dirty: environment.json says False, but it lists 'src/sacscale/usage' as changed: a record "
            "that names a changed source file is a dirty one, and the commit alone cannot rebuild the code that "
            "ran") in records, records
    assert ("set: stored diff: environment.json lists 'src/sacscale/usage' as changed, but its stored diff "
            "source.diff neither holds it nor lists it as left out: the commit and the diff cannot rebuild the code "
            "that ran") in records, records


def test_each_listed_source_file_must_be_held_by_the_stored_diff(empty_diff):
    (empty_diff / "source.diff").write_bytes(NEW_USAGE)
    listed = {"changed_files": ["src/sacscale/usage/", "src/sacscale/cli.py", "results/x/"], "changed_count": 3}
    problems = listed_change_problems(empty_diff, _dirty_empty(**listed))
    assert len(problems) == 1 and problems[0].startswith(
        "set: stored diff: environment.json lists 'src/sacscale/cli.py' as changed, but its stored diff"), problems
    # a folder held by a file in it, a file listed as left out, an output folder's file: all held
    big = {"path": "src/sacscale/cli.py", "bytes": 300_000, "sha256": "0" * 64}
    assert listed_change_problems(empty_diff, _dirty_empty(**listed, diff={"untracked_not_stored": [big]})) == []
    outputs_only = _dirty_empty(changed_files=["results/x/"], changed_count=1)
    outputs_only["project"]["dirty"] = False
    assert listed_change_problems(empty_diff, outputs_only) == []


ARROW_NAMED = b"""diff --git a/src/sacscale/a -> b.py b/src/sacscale/a -> b.py
new file mode 100644
index 0000000..1111111
--- /dev/null
+++ b/src/sacscale/a -> b.py
@@ -0,0 +1 @@
+X = 1
"""


@pytest.mark.parametrize("untracked", [["src/sacscale/a -> b.py"], []], ids=["untracked", "held-whole"])
def test_a_file_named_with_an_arrow_is_one_name_not_a_rename(empty_diff, untracked):
    """A legal name holding ` -> `, listed untracked or held whole by the diff, is that file."""
    (empty_diff / "source.diff").write_bytes(ARROW_NAMED)
    env = _dirty_empty(changed_files=["src/sacscale/a -> b.py"], changed_count=1,
                       diff={"untracked_files": untracked})
    assert listed_change_problems(empty_diff, env) == []


def test_a_rename_is_still_read_as_both_names(empty_diff):
    (empty_diff / "source.diff").write_bytes(ARROW_NAMED)
    env = _dirty_empty(changed_files=["src/sacscale/old.py -> src/sacscale/new.py"], changed_count=1)
    problems = listed_change_problems(empty_diff, env)
    assert len(problems) == 1 and "lists 'src/sacscale/old.py' (and 1 more) as changed" in problems[0], problems
