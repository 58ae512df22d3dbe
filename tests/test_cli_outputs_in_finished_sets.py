"""An output written over a finished run set's evidence. Before: `aggregate --json
results/S/summary.json`, `analyze-run --output results/S/metrics/...` and `compare-learning
--output/--figure` into a set whose manifest is made replaced or added to its evidence,
exit 0 (verify then failed). Now every command refuses an output in results/S/ or reports/S/
of a finished set in one line naming the option, the path and why, exit 2, nothing written;
the pipeline's own writes before the manifest, and verify's verify.json after it, go on."""

import sys
from pathlib import Path

import pytest

from cli_runs import SET, one_line, sacscale

sys.path.insert(0, str(Path(__file__).parent / "evidence"))
from set_copies import copy_committed_set  # noqa: E402

RUN = "shared_r1_n1_pool7"


@pytest.fixture
def finished(tmp_path):
    """An uncommitted copy of a finished set (its manifest made), in the repository's layout."""
    return copy_committed_set(tmp_path, SET)


def _says(option, output, root):
    return (f"argument {option}: {output} is inside results/{SET}, a finished run set (it has "
            f"results/{SET}/MANIFEST.sha256), whose evidence is not rewritten or added to; write it elsewhere")


def test_aggregate_json_over_a_finished_sets_summary_is_refused(finished, tmp_path):
    before = (finished / "summary.json").read_bytes()
    output = finished / "summary.json"
    done = sacscale("aggregate", *sorted((finished / "metrics").glob("*.json")), "--csv", tmp_path / "s.csv",
                    "--json", output)
    one_line(done, _says("--json", output, finished))
    assert (finished / "summary.json").read_bytes() == before
    assert not (tmp_path / "s.csv").exists()


def test_analyze_run_output_into_a_finished_sets_metrics_is_refused(finished):
    output = finished / "metrics" / "new.json"
    done = sacscale("analyze-run", finished / "runs" / RUN, "--output", output)
    one_line(done, _says("--output", output, finished))
    assert not output.exists()


@pytest.mark.parametrize("option, name", [("--output", "curves.json"), ("--figure", "curves.png")])
def test_compare_learning_outputs_into_a_finished_set_are_refused(finished, tmp_path, option, name):
    output = finished / "eval" / name
    other = "--figure" if option == "--output" else "--output"
    done = sacscale("compare-learning", f"a={finished / 'runs' / RUN}", option, output,
                    other, tmp_path / ("c.png" if other == "--figure" else "c.json"))
    one_line(done, _says(option, output, finished))
    assert not output.exists()


def test_an_output_in_a_finished_sets_report_folder_is_refused(finished, tmp_path):
    output = finished.parent.parent / "reports" / SET / "summary.json"
    done = sacscale("aggregate", *sorted((finished / "metrics").glob("*.json")), "--csv", tmp_path / "s.csv",
                    "--json", output)
    one_line(done, f"argument --json: {output} is inside reports/{SET}, a finished run set")
    assert not output.exists()


def test_before_the_manifest_the_pipeline_writes_the_sets_files(finished):
    """As the analyze and aggregate rules do (Snakemake may run them again) while the set is made."""
    (finished / "MANIFEST.sha256").unlink()
    metrics = finished / "metrics" / f"{RUN}.json"
    metrics.unlink()
    done = sacscale("analyze-run", finished / "runs" / RUN, "--output", metrics)
    assert done.returncode == 0, done.stderr
    done = sacscale("aggregate", *sorted((finished / "metrics").glob("*.json")), "--csv", finished / "summary.csv",
                    "--json", finished / "summary.json")
    assert done.returncode == 0, done.stderr


def test_verify_still_writes_the_sets_verify_json(finished):
    """The pipeline's verification comes after the manifest; its verify.json is the set's own."""
    done = sacscale("verify", finished, "--output", finished / "verify.json")
    assert done.returncode == 0, done.stderr


def test_the_manifest_made_again_is_written(finished):
    done = sacscale("manifest", finished, "--output", finished / "MANIFEST.sha256", "--json",
                    finished / "manifest.json")
    assert done.returncode == 0, done.stderr

