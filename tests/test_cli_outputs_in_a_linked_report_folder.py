"""A finished set's report folder written by its real path, and an older set's refusal.

Before: in a second checkout whose `results` and `reports` are links to another disk's
folders of other names (res_x, rep_x), an output written from outside that checkout into
rep_x/S (the set's report folder by its real path) was written, exit 0, though rep_x/S was
refused from the checkout itself and res_x/S from anywhere: a report folder was known only
by its parent's name. Now a folder holding the set's report page, beside whose parent a
folder of its name holds the set's manifest and plan, is that set's report folder, from any
working folder, for every command's outputs and the lock folder alike.

And a committed set made before source.diff was stored (h200x1), copied without the
verification written after its manifest, was refused with the advice to remove its
manifest, as a set manifested before its pipeline ended is."""

import argparse
import sys
from pathlib import Path

import pytest

from cli_runs import one_line, sacscale
from sacscale import finished_sets
from sacscale.commands._finished_sets import finished_set_problem
from sacscale.finished_sets import finished_set_holding, made_early, missing_outputs

sys.path.insert(0, str(Path(__file__).parent / "evidence"))
from set_copies import copy_committed_set  # noqa: E402

SET = "h200x1_shared_short"


@pytest.fixture
def linked(tmp_path):
    """A second checkout (its Snakefile) whose results/ and reports/ link to disk/res_x and
    disk/rep_x, a finished set S copied there; returns (checkout, res_x/S, rep_x/S)."""
    repo = copy_committed_set(tmp_path, SET).parent.parent
    disk = tmp_path / "disk"
    disk.mkdir()
    for sub, real in (("results", "res_x"), ("reports", "rep_x")):
        (repo / sub).rename(disk / real)
    checkout = tmp_path / "co2"
    checkout.mkdir()
    (checkout / "Snakefile").write_text("")
    (checkout / "results").symlink_to(disk / "res_x")
    (checkout / "reports").symlink_to(disk / "rep_x")
    return checkout, disk / "res_x" / SET, disk / "rep_x" / SET


def _aggregate_into(results: Path, output: Path, cwd: Path):
    return sacscale("aggregate", *sorted((results / "metrics").glob("*.json")), "--csv", cwd / "s.csv",
                    "--json", output, cwd=cwd)


def test_a_report_folder_by_its_real_path_is_refused_from_outside_the_checkout(linked, tmp_path):
    _, results, reports = linked
    output = reports / "new2.json"
    done = _aggregate_into(results, output, tmp_path)
    one_line(done, f"argument --json: {output} is inside {reports}, the report folder of a finished run set (its "
                   f"evidence folder {results} has MANIFEST.sha256 and plan.json), whose evidence is not rewritten "
                   "or added to; write it elsewhere")
    assert not output.exists() and not (tmp_path / "s.csv").exists()


def test_from_the_checkout_it_is_refused_as_reports_set(linked):
    checkout, results, reports = linked
    done = _aggregate_into(results, reports / "new2.json", checkout)
    one_line(done, f"is inside reports/{SET}, a finished run set")
    assert not (reports / "new2.json").exists()


def test_the_lock_folder_in_it_is_refused_from_anywhere(linked, tmp_path, monkeypatch):
    _, results, reports = linked
    monkeypatch.chdir(tmp_path)
    assert finished_set_holding(reports / "locks") == reports
    assert finished_sets.evidence_folder(reports) == results
    assert finished_sets.folder_kind(reports) == "reports"


def _report_args(run_set: Path) -> argparse.Namespace:
    return argparse.Namespace(run_set=str(run_set), summary=None, verification=None, manifest_json=None)


def test_the_pipelines_report_into_its_own_sets_folder_goes_on(linked, tmp_path, monkeypatch):
    """The report rule writes reports/S after the manifest: by its real path it is the set's."""
    _, results, reports = linked
    monkeypatch.chdir(tmp_path)
    page = reports / "report.md"
    assert finished_set_problem("report", _report_args(results), "--output-md", page, False) is None
    other = copy_committed_set(tmp_path / "other", SET)
    problem = finished_set_problem("report", _report_args(other), "--output-md", page, False)
    assert problem and "not the set this command was given" in problem


def test_a_folder_of_the_sets_name_without_its_report_is_not_its_report_folder(linked, tmp_path, monkeypatch):
    """A user's folder that happens to share the set's name beside it is theirs."""
    _, results, reports = linked
    monkeypatch.chdir(tmp_path)
    mine = reports.parent.parent / "mine" / SET
    mine.mkdir(parents=True)
    assert finished_set_holding(mine) is None
    (reports / "report.md").unlink()
    assert finished_set_holding(reports) is None


@pytest.fixture
def older(tmp_path):
    """A copy of h200x1 (made before source.diff was stored) as its manifest lists it: without
    the verification written after the manifest."""
    root = copy_committed_set(tmp_path, "h200x1")
    (root / "verify.json").unlink()
    return root


def test_an_older_set_without_its_verification_is_finished_not_made_early(older):
    assert missing_outputs(older) == [] and made_early(older) == ""
    output = older / "x.json"
    done = sacscale("analyze-run", sorted((older / "runs").iterdir())[0], "--output", output)
    one_line(done, f"argument --output: {output} is inside results/h200x1, a finished run set (it has "
                   "results/h200x1/MANIFEST.sha256), whose evidence is not rewritten or added to; write it elsewhere")
    assert not output.exists()


def test_a_set_that_records_its_diff_and_lost_it_was_made_early(tmp_path):
    """A set whose environment.json records a stored diff owes it: manifested without it, it
    was manifested before its pipeline ended."""
    root = copy_committed_set(tmp_path, SET)
    for name in ("source.diff", "verify.json"):
        (root / name).unlink()
    assert missing_outputs(root) == ["source.diff"]
    assert "but that set is not complete (no source.diff)" in made_early(root)


def test_an_older_sets_manifest_is_made_again(older):
    """Refused before as a set the pipeline has not finished (`no source.diff`)."""
    done = sacscale("manifest", older)
    assert done.returncode == 0, done.stderr
