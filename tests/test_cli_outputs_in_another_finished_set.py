"""A finished set's manifest, verdict or report written by a command given another set.
Before: the names the pipeline writes after the manifest (MANIFEST.sha256, manifest.json,
verify.json, the report, the best run's video) were let through in any finished set, so
`manifest results/B --output results/A/MANIFEST.sha256` replaced A's manifest with B's (A
then failed on every file) and `verify results/B --output results/A/verify.json` put B's
verdict on A's page. Now each such write is let through only into the set the command was
given, as the pipeline's rules give it; into another finished set it is refused in one line,
exit 2, nothing written."""

import argparse
import shutil
import sys
from pathlib import Path

import pytest

from cli_runs import SET, one_line, sacscale
from sacscale.commands._finished_sets import finished_set_problem

sys.path.insert(0, str(Path(__file__).parent / "evidence"))
from set_copies import copy_committed_set  # noqa: E402

OTHER = "other_set"


@pytest.fixture
def two_sets(tmp_path):
    """(A, B): two finished sets side by side, B a copy of A under another name."""
    first = copy_committed_set(tmp_path, SET)
    repo = first.parent.parent
    for sub in ("results", "reports"):
        shutil.copytree(repo / sub / SET, repo / sub / OTHER)
    return first, repo / "results" / OTHER


def _says(option, output, given):
    return (f"argument {option}: {output} is inside {output.relative_to(given.parent.parent).parts[0]}/{SET}, "
            f"a finished run set (it has results/{SET}/MANIFEST.sha256), not the set this command was given "
            f"({given}): another set's {output.name} is not written; write it elsewhere")


@pytest.mark.parametrize("option, name", [("--output", "MANIFEST.sha256"), ("--json", "manifest.json")])
def test_manifest_of_one_set_over_anothers_is_refused(two_sets, option, name):
    first, other = two_sets
    before = (first / name).read_bytes()
    done = sacscale("manifest", other, option, first / name)
    one_line(done, _says(option, first / name, other))
    assert (first / name).read_bytes() == before


@pytest.mark.parametrize("pending", [[], ["--report-pending"]])
def test_verification_of_one_set_over_anothers_is_refused(two_sets, pending):
    first, other = two_sets
    before = (first / "verify.json").read_bytes()
    done = sacscale("verify", other, *pending, "--output", first / "verify.json")
    one_line(done, _says("--output", first / "verify.json", other))
    assert (first / "verify.json").read_bytes() == before


def test_report_of_one_set_into_anothers_report_folder_is_refused(two_sets):
    first, other = two_sets
    reports = first.parent.parent / "reports" / SET
    before = (reports / "report.md").read_bytes()
    done = sacscale("report", "--run-set", other, "--output-dir", reports)
    one_line(done, f"argument --output-dir: {reports} is inside reports/{SET}, a finished run set (it has "
                   f"results/{SET}/MANIFEST.sha256), not the set this command was given ({other})")
    assert (reports / "report.md").read_bytes() == before


def _pipeline_args(command, results):
    """The arguments the pipeline's report and render-best rules give for the set `results`."""
    if command == "report":
        return argparse.Namespace(run_set=None, summary=str(results / "summary.json"),
                                  verification=str(results / "verify.json"),
                                  manifest_json=str(results / "manifest.json"))
    return argparse.Namespace(runs_dir=str(results / "runs"),
                              evaluations=[str(p) for p in sorted((results / "eval").glob("*.json"))])


WRITES = [("report", "--output-md", "report.md", False), ("report", "--figures-dir", "figures", True),
          ("render-best", "--output", "figures/best_run.webp", False),
          ("render-best", "--record", "figures/best_run.json", False)]


@pytest.mark.parametrize("command, option, name, folder", WRITES)
def test_the_pipelines_report_and_video_go_into_their_own_set_only(two_sets, command, option, name, folder):
    first, other = two_sets
    output = first.parent.parent / "reports" / SET / name
    assert finished_set_problem(command, _pipeline_args(command, first), option, output, folder) is None
    problem = finished_set_problem(command, _pipeline_args(command, other), option, output, folder)
    assert problem.endswith(f"not the set this command was given ({other}): another set's {name} is not "
                            "written; write it elsewhere"), problem


def test_a_report_whose_records_come_from_two_sets_has_no_set_of_its_own(two_sets):
    first, other = two_sets
    args = _pipeline_args("report", first)
    args.verification = str(other / "verify.json")
    output = first.parent.parent / "reports" / SET / "report.md"
    problem = finished_set_problem("report", args, "--output-md", output, False)
    assert "not the set this command was given (its inputs name no one set)" in problem, problem
