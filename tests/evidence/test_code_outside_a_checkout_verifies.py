"""Code imported from outside any checkout records no commit: an installed copy that differs
from the checkout (`installed_copy_of`), or a source archive (no `.git` anywhere). The
pipeline writes such sets (environment.json's project without commit or dirty flag, every
run.json `code.commit` and `code.dirty` null), and verify refused them as a commit recorded
null and a commit "not recorded by this older set" in a set made by this code."""

import json

import pytest
from set_copies import made_current

from sacscale.evidence.verify import verify

RUNS = ("shared_r1_n1_pool7", "shared_r1_n2_shared", "shared_r2_n1_pool7", "shared_r2_n2_shared")
OUTSIDE = {"path": "/tmp/site/sacscale", "repository": False, "error": "not a git repository"}


def _edit(path, edit) -> None:
    record = json.loads(path.read_text())
    edit(record)
    path.write_text(json.dumps(record, indent=2))


def _code_outside(work, project, workdir_git):
    def outside(env):
        env["project"] = project
        env["workdir"]["git"] = workdir_git if workdir_git is not None else env["workdir"]["git"]

    _edit(work / "environment.json", outside)
    for run in RUNS:
        _edit(work / "runs" / run / "run.json", lambda r: r["code"].update(commit=None, dirty=None))
    (work / "source.diff").unlink()
    made_current(work)
    return [p for p in verify(work).records if "commit" in p or "dirty" in p or "checkout" in p]


def test_an_installed_copy_that_differs_records_no_commit_and_verifies(work):
    def project_of(env_path):
        workdir = json.loads(env_path.read_text())["workdir"]["git"]["path"]
        return OUTSIDE | {"installed_copy_of": workdir, "installed_copy_differs": ["cli.py"]}

    assert _code_outside(work, project_of(work / "environment.json"), None) == []


def test_a_source_archive_records_no_commit_and_verifies(work):
    assert _code_outside(work, OUTSIDE, OUTSIDE | {"path": "/tmp/archive"}) == []


@pytest.mark.parametrize("field", ["commit", "dirty"])
def test_a_checkouts_null_commit_or_flag_is_still_named(work, field):
    _edit(work / "runs" / RUNS[0] / "run.json", lambda r: r["code"].update({field: None}))
    made_current(work)
    assert any(field in p for p in verify(work).records)
