"""The set's recorded commit, which the page tells its reader to check out: a value that is
no commit id as git writes one (`HEAD`, upper-case hex, any text) is named in a set made
by this code; a commit the checkout holds but committed after the runs began is named
(the code that ran cannot postdate them), beyond the clocks' allowed skew."""

import os
import subprocess

import pytest
from set_copies import copy_committed_set, current_copy, edit_record, remake_manifest, REPO

from sacscale.evidence import code_history
from sacscale.evidence.recorded_commit import COMMIT_SKEW_S, commit_findings, earliest_start
from sacscale.evidence.verify import verify

SET = "h200x1_shared_short"
ENV = "environment.json project.commit"
FORM = ("not a commit id as git writes one (40 lower-case hex digits) nor null (no git checkout): the page's "
        "rebuild line would check out something else")
# h200x1_shared_recheck's commit: in this project's history, committed 2026-12-05T01:08:51Z,
# 26.5 h after h200x1_shared_short's first run began
LATER = "934052f82e6002a517275a69cfe3c8b2532fbbb0"
FULL_CHECKOUT = code_history.git_output(["rev-parse", "--git-dir"], REPO) is not None \
    and not code_history.is_shallow(REPO)


def _set_commit(root, commit):
    edit_record(root, "environment.json", lambda r: r["project"].update(commit=commit))
    for run in (root / "runs").iterdir():
        edit_record(root, f"runs/{run.name}/run.json", lambda r: r["code"].update(commit=commit))
    remake_manifest(root)


@pytest.mark.parametrize("commit", ["HEAD", "DEADBEEF" * 5, "<b>x</b>", 12])
def test_a_recorded_commit_that_is_no_commit_id_is_named(tmp_path, commit):
    root = current_copy(tmp_path, SET)
    _set_commit(root, commit)
    records = verify(root, report_pending=True).records
    assert f"{ENV} {commit!r}: {FORM}" in records, records
    assert not [p for p in records if "run.json code.commit" in p and FORM in p], records  # one line per value


def test_in_an_older_set_it_is_a_note(tmp_path):
    root = copy_committed_set(tmp_path, "h200x1_final")  # made before evidence.json
    _set_commit(root, "HEAD")
    result = verify(root)
    assert f"{ENV} 'HEAD': {FORM} (an older set)" in result.notes, result.notes
    assert not [p for p in result.records if FORM in p], result.records


def test_none_recorded_outside_a_checkout_is_no_problem(tmp_path):
    recorded = [(ENV, None), ("r: run.json code.commit", None)]
    assert commit_findings(recorded, None, True, tmp_path) == ([], [])


def _git(*args, cwd, when="2026-12-01T00:00:00+00:00"):
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
           "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when, "PATH": os.environ["PATH"], "HOME": str(cwd)}
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=env)


def _checkout_committed_at(tmp_path, when):
    code = tmp_path / "code"
    code.mkdir()
    _git("init", "-q", cwd=code)
    (code / "a.txt").write_text("a\n")
    _git("add", "a.txt", cwd=code)
    _git("commit", "-q", "-m", "a", cwd=code, when=when)
    return code, code_history.git_output(["rev-parse", "HEAD"], code).strip()


def test_a_commit_made_after_the_runs_began_is_named(tmp_path):
    code, head = _checkout_committed_at(tmp_path, "2026-12-05T11:04:00+00:00")
    began = earliest_start("2026-12-03T22:37:26+00:00", [1796337482.2, 1796337542.3])
    problems, notes = commit_findings([(ENV, head)], began, True, code)
    assert problems == [f"{ENV} {head[:12]}: committed 2026-12-05T11:04:00+00:00, 36.4 h after the runs began "
                        "(2026-12-03T22:37:26+00:00, environment.json recorded_at): the code that ran cannot be a "
                        "commit made after it (clocks may differ by 1 h)"], problems
    assert notes == []


def test_a_commit_within_the_clocks_skew_is_not(tmp_path):
    code, head = _checkout_committed_at(tmp_path, "2026-12-03T23:30:00+00:00")
    began = earliest_start("2026-12-03T22:37:26+00:00", [])
    assert began[0] + COMMIT_SKEW_S > 1796340600  # 23:30Z, 53 min after
    assert commit_findings([(ENV, head)], began, True, code) == ([], [])


def test_the_earliest_start_is_the_runs_where_earlier():
    assert earliest_start("bad", [5.0, 3.0, "x", float("nan")]) == (3.0, "run.json start_time")
    assert earliest_start(None, []) is None


@pytest.mark.skipif(not FULL_CHECKOUT, reason="verify runs from a full git checkout here")
def test_verify_names_a_later_commit_of_this_project(tmp_path):
    root = current_copy(tmp_path, SET)
    _set_commit(root, LATER)
    records = verify(root, report_pending=True).records
    assert f"{ENV} {LATER[:12]}: committed 2026-12-05T01:08:51+00:00, 26.5 h after the runs began " \
           "(2026-12-03T22:37:26+00:00, environment.json recorded_at): the code that ran cannot be a commit made " \
           "after it (clocks may differ by 1 h)" in records, records
