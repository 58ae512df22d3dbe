"""environment.json against the stored diff and the CPUs: the diff it describes (file, size,
hash; the page shows them) is source.diff as the set holds it, and a clean tree's is empty;
its available CPUs and counts agree with its own lscpu layout, and every CPU a run pinned is
one that layout lists and one of the available CPUs. Each edit below, with the manifest and
the page made again, passed verify before these were compared."""

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


def test_a_clean_claim_beside_a_stored_diff_is_named(work):
    def clean_keeping_the_diff(env):
        env["project"]["dirty"] = False
    edit_environment(work, clean_keeping_the_diff)
    size = (work / "source.diff").stat().st_size
    assert f"set: code dirty: environment.json says False, its stored diff source.diff holds {size} bytes" \
        in record_problems(work)


def test_a_stored_diff_other_than_the_recorded_one_is_named(work):
    (work / "source.diff").write_bytes(b"")
    made_current(work)
    records = record_problems(work)
    assert any(p.startswith("set: stored diff: environment.json says source.diff is ") and "it is 0 bytes" in p
               for p in records), records


def test_a_recorded_diff_the_set_lacks_is_named(work):
    (work / "source.diff").unlink()
    made_current(work)
    assert any(p.startswith("set: stored diff: environment.json records source.diff (")
               and p.endswith("the set has none") for p in record_problems(work))


def _relabel_clean(env):
    """A dirty set said to be clean, its diff gone (the working directory's git state kept)."""
    del env["project"]["diff"]
    env["project"].update(dirty=False, changed_files=[], changed_count=0)


def _runs_clean(root):
    for run in (root / "runs").iterdir():
        record = json.loads((run / "run.json").read_text())
        record["code"]["dirty"] = False
        (run / "run.json").write_text(json.dumps(record, indent=1))


def test_a_dirty_set_relabelled_clean_without_its_diff_is_named(work):
    (work / "source.diff").unlink()
    _runs_clean(work)
    edit_environment(work, _relabel_clean)
    records = record_problems(work)
    assert "set: stored diff: environment.json records commit '881e5c75bedf' but no project.diff, which the " \
           "pipeline's verify-env always writes (empty for a clean tree): whether the code differed from the " \
           "commit rests on nothing" in records, records
    assert "set: code dirty: environment.json project.dirty says False, workdir.git.dirty says True (962 changed " \
           "files) of the same checkout and commit" in records, records


def test_available_cpus_the_records_own_layout_lacks_are_named(work):
    edit_environment(work, lambda env: env["cpu"].update(logical_cpus=64, available="0-63"))
    records = record_problems(work)
    assert any(p.startswith("set: CPUs: environment.json cpu.available '0-63' names CPUs its cpu.layout")
               for p in records)
    assert "set: CPUs: environment.json cpu.available_count says 16, cpu.available lists 64" in records
    assert ("set: CPUs: environment.json cpu.logical_cpus says 64, its cpu.layout (lscpu) lists 16 and 64 are "
            "available") in records


def test_pinned_cpus_the_hosts_layout_lacks_are_named(work):
    def eight_cpus(env):
        rows = env["cpu"]["layout"].splitlines()
        env["cpu"].update(layout="\n".join(rows[:9]) + "\n", logical_cpus=8, available="0-7", available_count=8)
    edit_environment(work, eight_cpus)
    records = record_problems(work)
    assert "shared_r1_n2_shared: CPU pools: train_meta.json pins CPU(s) 8, 9, 10, 11, 12, 13, 14, 15, which " \
           "environment.json's cpu.layout (lscpu, 8 CPUs) does not list" in records
    assert not any(p.startswith(f"{RUN}: CPU pools") for p in records)  # it pins 1-7


def test_pinned_cpus_beyond_the_available_ones_are_named(work):
    # the layout still lists all 16; the process is said to have had 2 of them
    edit_environment(work, lambda env: env["cpu"].update(available="0-1", available_count=2, logical_cpus=2))
    records = record_problems(work)
    assert (f"{RUN}: CPU pools: train_meta.json pins CPU(s) 2, 3, 4, 5, 6, 7, which environment.json's "
            "cpu.available ('0-1', 2 CPUs) does not hold: the CPUs the pipeline's process could use there") in records
    assert any(p.startswith("shared_r1_n2_shared: CPU pools: train_meta.json pins CPU(s) 2, 3, 4, 5, 6, 7, 8, 9, "
                            "which environment.json's cpu.available") for p in records), records
