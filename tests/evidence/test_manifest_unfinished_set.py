"""A manifest made by hand into a set the pipeline is still building. Before: `sacscale
manifest results/S` between two of the pipeline's jobs wrote MANIFEST.sha256 and
manifest.json into the half-built set, exit 0; the set then counted as finished, and the
pipeline's next job (`analyze-run --output results/S/metrics/...`) was refused on every
rerun, with no word of the way out. Now the manifest of a set with a plan.json whose planned
outputs are missing is refused, exit 2, naming the first missing and leaving nothing; a set
without a plan (a bench made by hand), a complete set, or a manifest written outside the set
go on. A set already marked finished too early is named so, with the way out."""

import json
import shutil
from pathlib import Path

import pytest

from cli_runs import one_line, sacscale
from set_copies import copy_committed_set

SET = "h200x1_shared_short"
LAST = "shared_r2_n2_shared"  # the plan's last run


@pytest.fixture
def building(tmp_path):
    """The set as the pipeline leaves it between two jobs: its last run not trained yet,
    so neither its metrics nor its evaluation nor the summary exist, and no manifest."""
    root = copy_committed_set(tmp_path, SET)
    shutil.rmtree(root / "runs" / LAST)
    for name in ("MANIFEST.sha256", "manifest.json", "verify.json", "summary.csv", "summary.json",
                 f"metrics/{LAST}.json", f"eval/{LAST}.json"):
        (root / name).unlink()
    return root


def _listing(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root.parent)) for p in root.parent.rglob("*"))


def test_manifest_of_a_set_the_pipeline_has_not_finished_is_refused(building):
    before = _listing(building)
    done = sacscale("manifest", building)
    one_line(done, f"{building}: a run set the pipeline has not finished: no summary.csv, summary.json, "
                   f"runs/{LAST}/run.json and 2 more, which its plan.json promises before the manifest; the "
                   "pipeline writes the manifest once the set is complete (run it again to finish the set); "
                   "nothing was written")
    assert _listing(building) == before  # no manifest, no record, no lock left beside the set


def test_scope_step_of_an_unfinished_set_moves_and_writes_nothing(building, tmp_path):
    before = _listing(building)
    evidence = (building / "evidence.json").read_bytes() if (building / "evidence.json").exists() else None
    done = sacscale("manifest", building, "--scope", "--output", tmp_path / "m.sha256", "--json", tmp_path / "m.json")
    one_line(done, "a run set the pipeline has not finished")
    assert _listing(building) == before
    assert ((building / "evidence.json").read_bytes() if evidence is not None else None) == evidence
    assert not (tmp_path / "m.sha256").exists() and not (tmp_path / "m.json").exists()


def test_manifest_of_an_unfinished_set_written_outside_it_goes_on(building, tmp_path):
    """Nothing is written into the set: it is not marked finished, and a look at its hashes
    so far is fine."""
    done = sacscale("manifest", building, "--output", tmp_path / "m.sha256", "--json", tmp_path / "m.json")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "m.sha256").is_file() and not (building / "MANIFEST.sha256").exists()


def test_a_set_made_by_hand_without_a_plan_is_hashed_as_it_is(building):
    (building / "plan.json").unlink()
    done = sacscale("manifest", building)
    assert done.returncode == 0, done.stderr
    assert (building / "MANIFEST.sha256").is_file() and (building / "manifest.json").is_file()


def test_a_complete_set_without_evaluations_is_hashed(tmp_path):
    """A plan made before plan.json recorded whether evaluation is on does not say: a set
    without any evaluation is not held to them; the pipeline's manifest made again over a
    complete set goes on."""
    root = copy_committed_set(tmp_path, SET)
    shutil.rmtree(root / "eval")
    done = sacscale("manifest", root)
    assert done.returncode == 0, done.stderr


def _evaluation_planned(root: Path, enabled: bool) -> None:
    """plan.json as planning now writes it: it says whether the pipeline evaluates."""
    plan = json.loads((root / "plan.json").read_text())
    plan["evaluation"] = {"enabled": enabled, "envs_per_command": 8, "seconds": 20.0}
    (root / "plan.json").write_text(json.dumps(plan, indent=1))


def test_a_set_whose_plan_evaluates_is_not_finished_without_its_evaluations(tmp_path):
    """Every evaluation missing (the set after `snakemake --until aggregate`): hashed as
    finished before, though the plan evaluates and the manifest rule waits for them."""
    root = copy_committed_set(tmp_path, SET)
    for name in ("MANIFEST.sha256", "manifest.json"):
        (root / name).unlink()
    shutil.rmtree(root / "eval")
    _evaluation_planned(root, enabled=True)
    before = _listing(root)
    done = sacscale("manifest", root)
    one_line(done, f"{root}: a run set the pipeline has not finished: no eval/shared_r1_n1_pool7.json, "
                   "eval/shared_r1_n2_shared.json, eval/shared_r2_n2_shared.json and 1 more, which its plan.json "
                   "promises before the manifest; the pipeline writes the manifest once the set is complete (run "
                   "it again to finish the set); nothing was written")
    assert _listing(root) == before


def test_a_set_whose_plan_does_not_evaluate_is_hashed_without_evaluations(tmp_path):
    root = copy_committed_set(tmp_path, SET)
    shutil.rmtree(root / "eval")
    _evaluation_planned(root, enabled=False)
    done = sacscale("manifest", root)
    assert done.returncode == 0, done.stderr
    assert "eval/" not in (root / "MANIFEST.sha256").read_text()


def test_a_set_marked_finished_too_early_is_named_with_the_way_out(building):
    """The state the early manifest left: the pipeline's next job is refused, and says why."""
    (building / "MANIFEST.sha256").write_text("")
    output = building / "metrics" / f"{LAST}.json"
    done = sacscale("analyze-run", building / "runs" / "shared_r1_n1_pool7", "--output", output)
    one_line(done, f"argument --output: {output} is inside results/{SET}, a finished run set (it has "
                   f"results/{SET}/MANIFEST.sha256); but that set is not complete (no summary.csv, summary.json, "
                   f"runs/{LAST}/run.json and 2 more): its MANIFEST.sha256 and manifest.json were written before "
                   "the set was complete: remove both, then run the pipeline again")
    assert not output.exists()


def test_a_set_whose_plan_cannot_be_read_is_not_taken_for_one_made_by_hand(building):
    """A half-written plan.json made the half-built set look made by hand, and hashed."""
    (building / "plan.json").write_text('{"run_configs": 1')
    done = sacscale("manifest", building)
    one_line(done, f"{building}: a run set the pipeline has not finished: no plan.json that can be read (it is "
                   "there, but not as JSON), which its plan.json promises")
    assert not (building / "MANIFEST.sha256").exists()


def test_an_older_finished_set_is_not_told_to_remove_its_manifest(tmp_path):
    """h200x1 was made before source.diff was recorded, and verified after its manifest: an
    output into it was refused with the advice to remove its manifest, as for one made early."""
    root = copy_committed_set(tmp_path, "h200x1")
    output = root / "x.json"
    done = sacscale("analyze-run", sorted((root / "runs").iterdir())[0], "--output", output)
    one_line(done, f"argument --output: {output} is inside results/h200x1, a finished run set (it has "
                   "results/h200x1/MANIFEST.sha256), whose evidence is not rewritten or added to; write it elsewhere")
    assert not output.exists()
