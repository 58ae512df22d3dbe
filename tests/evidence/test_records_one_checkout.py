"""environment.json reads the git state twice, for the code (`project`) and the working
directory (`workdir.git`); the pipeline runs from the checkout it imports its code from, so
both name one checkout at one commit. The dirty flags were compared only where the paths
were equal: a dirty set relabelled clean passed once workdir.git.path was edited too."""

import hashlib
import json

from set_copies import REPO, made_current

from sacscale.evidence.shared_facts import dirty_problems
from sacscale.evidence.verify import verify

RUNS = ("shared_r1_n1_pool7", "shared_r1_n2_shared", "shared_r2_n1_pool7", "shared_r2_n2_shared")


def _edit(path, edit) -> None:
    record = json.loads(path.read_text())
    edit(record)
    path.write_text(json.dumps(record, indent=2))


def _relabel_clean(env, workdir_path):
    env["project"].update(dirty=False, changed_files=[], changed_count=0)
    env["project"]["diff"].update(bytes=0, sha256=hashlib.sha256(b"").hexdigest())
    env["workdir"]["git"]["path"] = workdir_path


def test_a_dirty_set_relabelled_clean_with_another_workdir_path_is_named(work):
    (work / "source.diff").write_bytes(b"")
    _edit(work / "environment.json", lambda env: _relabel_clean(env, "/elsewhere"))
    for run in RUNS:
        _edit(work / "runs" / run / "run.json", lambda r: r["code"].update(dirty=False))
    made_current(work)
    records = verify(work).records
    assert ("set: code checkout: environment.json project.path '/work/main' is not workdir.git.path '/elsewhere': "
            "the pipeline runs from the checkout it imports its code from, so both name one checkout") in records


def test_another_workdir_commit_is_named(work):
    _edit(work / "environment.json", lambda env: env["workdir"]["git"].update(commit="0" * 40))
    made_current(work)
    assert ("set: code checkout: environment.json project.commit '881e5c75bedf' is not workdir.git.commit "
            "'000000000000': the pipeline runs from the checkout it imports its code from, so both name one "
            "checkout") in verify(work).records


def test_code_from_an_installed_copy_outside_any_checkout_has_its_own_path():
    """h200_ref_pair_partial's code was imported from a copy outside any checkout
    (project.repository false): its path is the copy's, and it records no commit."""
    env = json.loads((REPO / "results" / "h200_ref_pair_partial" / "environment.json").read_text())
    assert env["project"]["path"] != env["workdir"]["git"]["path"]
    assert dirty_problems(env) == []


def test_every_committed_set_names_one_checkout():
    for env_file in sorted((REPO / "results").glob("*/environment.json")):
        env = json.loads(env_file.read_text())
        assert dirty_problems(env) == [], env_file
