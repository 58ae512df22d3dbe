"""environment.json states facts that other records state again: the torch version
(train_meta.json, correctness.json, and environment.json itself twice), the Python version
(train_meta.json) and the code's dirty flag (run.json).
Each edit below, with the manifest and the page made again, passed verify when only the
code's commit was compared: the page then showed what environment.json was edited to say."""

import json

from set_copies import made_current

from sacscale.evidence.verify import verify

SET = "h200x1_shared_short"
RUN = "shared_r1_n1_pool7"


def edit_environment(root, edit) -> None:
    """environment.json changed by `edit(env)`, then the manifest and the page made again."""
    path = root / "environment.json"
    env = json.loads(path.read_text())
    edit(env)
    path.write_text(json.dumps(env, indent=2))
    made_current(root)


def record_problems(root) -> list[str]:
    result = verify(root)
    assert not result.ok
    # the page was made again from the edited record: only the records disagree
    assert not (result.changed or result.missing or result.extra or result.derived), result.problems()
    return result.records


def test_the_set_as_made_passes(current):
    result = verify(current)
    assert result.ok, result.problems()


def _torch(env, version):
    env["versions"]["torch"] = env["torch"]["version"] = version


def test_a_torch_version_other_records_contradict_is_named(work):
    edit_environment(work, lambda env: _torch(env, "2.5.1+cu124"))
    records = record_problems(work)
    assert f"{RUN}: torch version: environment.json says '2.5.1+cu124', train_meta.json says '2.11.0+cu130'" in records
    assert ("set: torch version: environment.json versions says '2.5.1+cu124', correctness.json says "
            "'2.11.0+cu130'") in records


def test_a_torch_version_environment_json_states_twice_differently_is_named(work):
    edit_environment(work, lambda env: env["torch"].update(version="2.5.1+cu124"))
    assert record_problems(work) == ["set: torch version: environment.json versions says '2.11.0+cu130', "
                                     "environment.json torch says '2.5.1+cu124'"]


def test_a_python_version_the_runs_contradict_is_named(work):
    edit_environment(work, lambda env: env["python"].update(version="3.10.4"))
    assert f"{RUN}: Python version: environment.json says '3.10.4', train_meta.json says '3.12.3'" \
        in record_problems(work)


def _claim_clean(env):
    for state in (env["project"], env["workdir"]["git"]):
        state.update(dirty=False, changed_files=[], changed_count=0)
    env["project"].pop("diff", None)


def test_a_dirty_tree_claimed_clean_is_named(work):
    (work / "source.diff").unlink()
    edit_environment(work, _claim_clean)
    records = record_problems(work)
    assert f"{RUN}: code dirty: environment.json says False, run.json says True" in records
