"""`project.commit: null` (with each run.json code.commit null) switched every check of the
commit off. In a set made by this code, which records `git rev-parse HEAD` of the checkout
it runs from, a null commit is named; an older set's stays as recorded."""

import json

from set_copies import made_current

from sacscale.evidence.recorded_commit import null_commit_problems
from sacscale.evidence.verify import verify

RUNS = ("shared_r1_n1_pool7", "shared_r1_n2_shared", "shared_r2_n1_pool7", "shared_r2_n2_shared")


def _edit(path, edit) -> None:
    record = json.loads(path.read_text())
    edit(record)
    path.write_text(json.dumps(record, indent=2))


def _no_commit(env):
    env["project"]["commit"] = env["workdir"]["git"]["commit"] = None


def test_a_null_commit_in_a_set_made_by_this_code_is_named(work):
    _edit(work / "environment.json", _no_commit)
    for run in RUNS:
        _edit(work / "runs" / run / "run.json", lambda r: r["code"].update(commit=None))
    made_current(work)
    assert ("environment.json project.commit (and 4 more): null, but the pipeline records the commit its checkout "
            "ran (git rev-parse HEAD): with none, no check of the commit runs and the page names no code to "
            "rebuild") in verify(work).records


def test_an_older_sets_null_commit_is_as_recorded():
    assert null_commit_problems([("environment.json project.commit", None)], strict=False) == []
