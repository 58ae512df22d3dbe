"""environment.json's two git records (`project`, `workdir.git`) as git_state writes them.
A dirty set relabelled clean passed, its page saying "(clean)", where the record it is
compared with was switched off: `project.repository: false` (code from outside any
checkout) still carrying a commit, `workdir.git` not a record, or a dirty flag null."""

import hashlib
import json

from set_copies import REPO, made_current, report_file

from sacscale.evidence.shared_facts import git_record_findings
from sacscale.evidence.verify import verify

RUNS = ("shared_r1_n1_pool7", "shared_r1_n2_shared", "shared_r2_n1_pool7", "shared_r2_n2_shared")
OUTSIDE = ("set: code checkout: environment.json project.repository is false (no git checkout), yet project "
           "records commit '881e5c75bedf' and dirty False: the pipeline records neither without a checkout, so "
           "they name no code that ran")


def _edit(path, edit) -> None:
    record = json.loads(path.read_text())
    edit(record)
    path.write_text(json.dumps(record, indent=2))


def _relabelled_clean(work, edit_env) -> list[str]:
    """The dirty set relabelled clean (empty diff, every dirty flag false), environment.json
    then edited by `edit_env`, made consistent again; verify's record problems."""
    def relabel(env):
        env["project"].update(dirty=False, changed_files=[], changed_count=0)
        env["project"]["diff"].update(bytes=0, sha256=hashlib.sha256(b"").hexdigest(), untracked_files=[])
        edit_env(env)

    (work / "source.diff").write_bytes(b"")
    _edit(work / "environment.json", relabel)
    for run in RUNS:
        _edit(work / "runs" / run / "run.json", lambda r: r["code"].update(dirty=False))
    made_current(work)
    return verify(work).records


def test_a_commit_beside_repository_false_is_named_and_the_page_names_no_commit(work):
    records = _relabelled_clean(work, lambda env: env["project"].update(repository=False, path="/tmp/sacscale-site"))
    assert OUTSIDE in records
    page = report_file(work, "report.md").read_text()
    assert "- project commit: none: the code is not identified by a commit (not imported from a git checkout)" in page
    assert "(clean)" not in page


def test_workdir_git_not_a_record_is_named(work):
    records = _relabelled_clean(work, lambda env: env["workdir"].update(git="n/a"))
    assert ("set: code dirty: environment.json workdir.git is 'n/a', not the git state the pipeline records "
            "(repository, commit, dirty): the code's dirty flag is compared with it") in records


def test_a_null_workdir_dirty_flag_is_named(work):
    records = _relabelled_clean(work, lambda env: env["workdir"]["git"].update(dirty=None))
    assert ("set: code dirty: environment.json workdir.git.dirty is null, not true or false: the pipeline records "
            "whether the checkout differs from its commit (git status), which the page shows as clean or not") \
        in records


def _current_env() -> dict:
    return json.loads((REPO / "results" / "h200x1_shared_short" / "environment.json").read_text())


def test_each_missing_or_misshapen_git_record_is_one_line():
    cases = {
        "workdir is None": lambda env: env.update(workdir=None),
        "workdir.git is [1]": lambda env: env["workdir"].update(git=[1]),
        "workdir.git is absent": lambda env: env["workdir"].pop("git"),
        "project.dirty is null": lambda env: env["project"].update(dirty=None),
        "project.dirty is 'no'": lambda env: env["project"].update(dirty="no"),
        "project.repository is absent": lambda env: env["project"].pop("repository"),
        "workdir.git.repository is 1": lambda env: env["workdir"]["git"].update(repository=1),
    }
    for said, edit in cases.items():
        env = _current_env()
        edit(env)
        problems, notes = git_record_findings(env, strict=True)
        assert len(problems) == 1 and problems[0].startswith(f"set: code dirty: environment.json {said}, "), problems
        older, notes = git_record_findings(env, strict=False)
        assert older == [] and notes[0].endswith("(an older set: not checked)")


def test_a_dirty_flag_beside_repository_false_is_named_in_any_set():
    env = _current_env()
    env["workdir"]["git"].update(repository=False, commit=None)
    problems, _ = git_record_findings(env, strict=False)
    assert problems[0] == ("set: code checkout: environment.json workdir.git.repository is false (no git checkout), "
                           "yet workdir.git records dirty True: the pipeline records neither without a checkout, so "
                           "they name no code that ran")
    assert len(problems) == 1  # the pair itself (code in a checkout, run from outside any) is one a process writes


# an older set (verify judges it so): its code, from a copy outside any checkout, was recorded
# before installed_copy_of named the working directory's checkout it was copied from
OLDER_INSTALLED_COPY = "h200_ref_pair_partial"


def test_code_from_an_installed_copy_records_no_commit_and_passes():
    """h200_ref_pair_partial's code was imported from a copy outside any checkout: its
    project record has neither commit nor dirty flag, as git_state writes it; only the
    installed_copy_of written since is missing, a note in an older set."""
    env = json.loads((REPO / "results" / OLDER_INSTALLED_COPY / "environment.json").read_text())
    problems, notes = git_record_findings(env, strict=False)
    assert problems == []
    assert len(notes) == 1 and notes[0].startswith("set: code checkout: environment.json project.repository is "
                                                    "false (no git checkout) without installed_copy_of, ")


def test_every_committed_environment_record_is_as_git_state_writes_it():
    for env_file in sorted((REPO / "results").glob("*/environment.json")):
        if env_file.parent.name != OLDER_INSTALLED_COPY:
            assert git_record_findings(json.loads(env_file.read_text()), strict=True) == ([], []), env_file
