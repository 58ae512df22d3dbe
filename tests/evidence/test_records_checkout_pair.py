"""environment.json's `project` and `workdir.git` are both written by one pipeline process:
both in one checkout, both outside any (or both without git), the code in a checkout run
from a workflow folder outside any (a copy of the workflow elsewhere, as the pipeline tests
run it), or the code an installed copy whose `installed_copy_of` names the working
directory's checkout. A dirty set relabelled clean passed, its page saying "(clean)", with
`workdir.git` made a record without git (`repository` null) beside `project` in a checkout
with its commit: the dirty flags were then not compared. (With `repository` false the pair
is one a process writes; the relabel is then the documented limit of a flag no file outside
the records states: docs/record-fields.md, project.dirty.)"""

import hashlib
import json

import pytest
from set_copies import REPO, made_current, report_file

from sacscale.evidence.shared_facts import checkout_pair_findings
from sacscale.evidence.verify import verify

RUNS = ("shared_r1_n1_pool7", "shared_r1_n2_shared", "shared_r2_n1_pool7", "shared_r2_n2_shared")
ONE_PROCESS = ("one pipeline process records both: both in one checkout, both outside any, both without git, the "
               "code in a checkout run from a folder outside any, or the code an installed copy outside any "
               "checkout whose installed_copy_of names the working directory's checkout")
CHECKOUT = {"path": "/work/main", "repository": True, "commit": "1" * 40, "dirty": False}
OUTSIDE = {"path": "/tmp/site/sacscale", "repository": False, "error": "not a git repository"}
NO_GIT = {"path": "/work/main", "repository": None, "error": "git is not installed"}


def _edit(path, edit) -> None:
    record = json.loads(path.read_text())
    edit(record)
    path.write_text(json.dumps(record, indent=2))


def _relabelled_clean(work, workdir_git) -> list[str]:
    """The dirty set relabelled clean (empty diff, every dirty flag false) with `workdir.git`
    replaced, made consistent again; verify's record problems."""
    def relabel(env):
        env["project"].update(dirty=False, changed_files=[], changed_count=0)
        env["project"]["diff"].update(bytes=0, sha256=hashlib.sha256(b"").hexdigest(), untracked_files=[])
        env["workdir"]["git"] = workdir_git

    (work / "source.diff").write_bytes(b"")
    _edit(work / "environment.json", relabel)
    for run in RUNS:
        _edit(work / "runs" / run / "run.json", lambda r: r["code"].update(dirty=False))
    made_current(work)
    return verify(work).records


@pytest.mark.parametrize("workdir_git, said", [
    ({"path": "/work/main", "repository": None}, "null (no git)"),
])
def test_a_checkout_beside_a_working_directory_of_none_is_named(work, workdir_git, said):
    records = _relabelled_clean(work, workdir_git)
    assert (f"set: code checkout: environment.json project.repository is true (a git checkout), "
            f"workdir.git.repository is {said}: {ONE_PROCESS}") in records
    assert "(clean)" in report_file(work, "report.md").read_text()  # the page says what the records say


@pytest.mark.parametrize("project, workdir", [
    (CHECKOUT, CHECKOUT),
    (CHECKOUT, OUTSIDE | {"path": "/tmp/wf"}),  # a workflow folder copied outside the checkout
    (OUTSIDE, OUTSIDE | {"path": "/tmp/elsewhere"}),
    (NO_GIT, NO_GIT),
    (OUTSIDE | {"installed_copy_of": "/work/main", "installed_copy_differs": ["cli.py"]}, CHECKOUT),
])
def test_the_pairs_one_process_writes_pass(project, workdir):
    assert checkout_pair_findings({"project": project, "workdir": {"git": workdir}}, True) == ([], [])


@pytest.mark.parametrize("project, workdir, says", [
    (OUTSIDE, CHECKOUT, "project.repository is false (no git checkout) without installed_copy_of, "
                        "workdir.git.repository is true (a git checkout)"),
    (OUTSIDE, NO_GIT, "project.repository is false (no git checkout), workdir.git.repository is null (no git)"),
    (NO_GIT, CHECKOUT, "project.repository is null (no git), workdir.git.repository is true (a git checkout)"),
    (CHECKOUT, NO_GIT, "project.repository is true (a git checkout), workdir.git.repository is null (no git)"),
    (OUTSIDE | {"installed_copy_of": "/elsewhere"}, CHECKOUT,
     "project.installed_copy_of '/elsewhere' beside project.repository false (no git checkout), workdir.git.path "
     "'/work/main' with workdir.git.repository true (a git checkout)"),
    (OUTSIDE | {"installed_copy_of": "/work/main"}, OUTSIDE,
     "project.installed_copy_of '/work/main' beside project.repository false (no git checkout), workdir.git.path "
     "'/tmp/site/sacscale' with workdir.git.repository false (no git checkout)"),
    (CHECKOUT | {"installed_copy_of": "/work/main"}, CHECKOUT,
     "project.installed_copy_of '/work/main' beside project.repository true (a git checkout), workdir.git.path "
     "'/work/main' with workdir.git.repository true (a git checkout)"),
])
def test_every_other_pair_is_named(project, workdir, says):
    env = {"project": project, "workdir": {"git": workdir}}
    assert checkout_pair_findings(env, True) == ([f"set: code checkout: environment.json {says}: {ONE_PROCESS}"], [])


def test_an_older_sets_code_outside_any_checkout_without_installed_copy_of_is_a_note():
    """h200_ref_pair_partial's code was imported from a copy outside any checkout, recorded
    before installed_copy_of was: a note there, never a silent skip."""
    env = json.loads((REPO / "results" / "h200_ref_pair_partial" / "environment.json").read_text())
    problems, notes = checkout_pair_findings(env, False)
    assert problems == []
    assert notes == ["set: code checkout: environment.json project.repository is false (no git checkout) without "
                     f"installed_copy_of, workdir.git.repository is true (a git checkout): {ONE_PROCESS} "
                     "(an older set: not checked)"]
