"""A set made from code outside any checkout, relabelled a checkout's commit: git's error
("not a git repository") left beside the commit in run.json passed. A code record holding
git's error and a commit, a dirty state or a repository is named."""

from set_copies import edit_record, remake_manifest

from sacscale.evidence.verify import verify

RUN = "shared_r1_n1_pool7"
ERROR = "fatal: not a git repository (or any of the parent directories): .git"


def test_a_runs_git_error_beside_its_commit_is_named(work):
    edit_record(work, f"runs/{RUN}/run.json", lambda run: run["code"].update(error=ERROR))
    remake_manifest(work)
    problems = verify(work).problems()
    assert [p for p in problems if "git found no checkout" in p] == [
        f"record: runs/{RUN}/run.json code: error 'fatal: not a git repository (or any of the parent directorie' "
        "(git found no checkout) beside commit '881e5c75bedf', dirty True, which git gives only in a checkout: the "
        "record was edited"]


def test_the_environments_git_error_beside_a_repository_is_named(work):
    edit_record(work, "environment.json", lambda env: env["project"].update(error=ERROR))
    remake_manifest(work)
    lines = [p for p in verify(work).problems() if "git found no checkout" in p]
    assert len(lines) == 1 and lines[0].startswith("record: environment.json project: error ")
    assert lines[0].endswith("beside commit '881e5c75bedf', dirty True, repository true, which git gives only in a "
                             "checkout: the record was edited")


def test_a_record_outside_any_checkout_passes():
    from sacscale.evidence.code_record import git_error_problems

    assert git_error_problems([("run.json code", {"commit": None, "dirty": None, "error": ERROR}),
                               ("environment.json project", {"path": "/x", "repository": False, "error": ERROR})]) == []


def test_the_working_folders_git_error_beside_its_commit_is_named(work):
    """workdir.git is the same git record, of the folder the pipeline ran in."""
    edit_record(work, "environment.json", lambda env: env["workdir"]["git"].update(error=ERROR))
    remake_manifest(work)
    lines = [p for p in verify(work).problems() if "git found no checkout" in p]
    assert len(lines) == 1 and lines[0].startswith("record: environment.json workdir.git: error "), lines
