"""An output written over a finished run set's evidence. Before: `aggregate --json
results/S/summary.json`, `analyze-run --output results/S/metrics/...` and `compare-learning
--output/--figure` into a set whose manifest is made replaced or added to its evidence,
exit 0 (verify then failed). Now every command refuses an output in results/S/ or reports/S/
of a finished set in one line naming the option, the path and why, exit 2, nothing written;
the pipeline's own writes before the manifest, and the manifest made again after it, go on.
A manifest counts only as its user's own plain file, and a set is found as its path is
written (a `results` link to another disk) as well as resolved."""

import os

import shutil
import sys
from pathlib import Path

import pytest

from cli_runs import REPO, SET, one_line, sacscale

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
    done = sacscale("analyze-run", finished / "runs" / RUN, "--output", metrics, pipeline_set=SET)
    assert done.returncode == 0, done.stderr
    done = sacscale("aggregate", *sorted((finished / "metrics").glob("*.json")), "--csv", finished / "summary.csv",
                    "--json", finished / "summary.json", pipeline_set=SET)
    assert done.returncode == 0, done.stderr


def test_the_manifest_made_again_is_written(finished):
    done = sacscale("manifest", finished, "--output", finished / "MANIFEST.sha256", "--json",
                    finished / "manifest.json")
    assert done.returncode == 0, done.stderr



def _aggregate_into(finished, output, tmp_path):
    return sacscale("aggregate", *sorted((finished / "metrics").glob("*.json")), "--csv", tmp_path / "s.csv",
                    "--json", output)


@pytest.mark.skipif(os.getuid() != 0, reason="giving a file to another user needs root")
def test_another_users_manifest_does_not_make_a_finished_set_of_ones_own_folder(finished, tmp_path):
    """Another user's MANIFEST.sha256 at results/agg/ (where /tmp lets them make it) does not
    refuse this user's outputs in their own reports/agg/."""
    theirs = tmp_path / "results" / "agg"
    theirs.mkdir(parents=True)
    (theirs / "MANIFEST.sha256").touch()
    os.chown(theirs / "MANIFEST.sha256", 1001, 1001)
    os.chown(theirs, 1001, 1001)
    mine = tmp_path / "reports" / "agg"
    mine.mkdir(parents=True)
    done = _aggregate_into(finished, mine / "s.json", tmp_path)
    assert done.returncode == 0, done.stderr
    assert (mine / "s.json").is_file()


def test_a_manifest_that_is_a_link_does_not_make_a_finished_set(finished, tmp_path):
    made = tmp_path / "results" / "agg"
    made.mkdir(parents=True)
    (made / "MANIFEST.sha256").symlink_to(finished / "MANIFEST.sha256")
    done = _aggregate_into(finished, made / "s.json", tmp_path)
    assert done.returncode == 0, done.stderr


@pytest.mark.skipif(os.getuid() != 0, reason="giving a set to another user needs root")
@pytest.mark.parametrize("name", ["summary.json", "verify.json"])
def test_another_users_finished_set_is_refused_as_their_folder(finished, tmp_path, name):
    """Their manifest does not finish the set for this user; the rule on other users' folders
    refuses the write, the names the pipeline writes after the manifest too."""
    for path in (finished, finished / "MANIFEST.sha256"):
        os.chown(path, 1001, 1001)
    before = (finished / name).read_bytes()
    output = finished / name
    if name == "verify.json":
        done = sacscale("verify", finished, "--report-pending", "--output", output)
    else:
        done = _aggregate_into(finished, output, tmp_path)
    one_line(done, f"argument {'--output' if name == 'verify.json' else '--json'}: {finished}: belongs to uid 1001, "
                   f"another user, who could replace what is written there; write {output} into a folder of your own")
    assert (finished / name).read_bytes() == before


@pytest.fixture
def behind_a_link(tmp_path):
    """The set kept on another disk: repo/results a link to ../store, reports/ beside it."""
    repo = copy_committed_set(tmp_path, SET).parent.parent
    shutil.move(repo / "results", repo / "store")
    (repo / "results").symlink_to("store")
    return repo / "results" / SET


@pytest.mark.parametrize("name", ["summary.json", f"eval/{RUN}.json"])
def test_a_set_behind_a_results_link_is_still_finished(behind_a_link, tmp_path, name):
    before = (behind_a_link / name).read_bytes()
    output = behind_a_link / name
    done = _aggregate_into(behind_a_link, output, tmp_path)
    one_line(done, _says("--json", output, behind_a_link))
    assert (behind_a_link / name).read_bytes() == before


def test_a_set_behind_a_results_link_makes_its_manifest_again(behind_a_link):
    done = sacscale("manifest", behind_a_link, "--output", behind_a_link / "MANIFEST.sha256", "--json",
                    behind_a_link / "manifest.json")
    assert done.returncode == 0, done.stderr


@pytest.fixture
def stored_elsewhere(tmp_path):
    """A second checkout whose results/ links to another disk's folder not named results: the
    set's real path names no results/ folder."""
    repo = copy_committed_set(tmp_path, SET).parent.parent
    store = tmp_path / "disk2" / "res_store"
    store.parent.mkdir()
    shutil.move(repo / "results", store)
    (repo / "results").symlink_to(store)
    (tmp_path / "elsewhere").mkdir()
    return store / SET


def test_a_finished_set_written_by_its_real_path_from_elsewhere_is_refused(stored_elsewhere, tmp_path):
    output = stored_elsewhere / "x.json"
    done = sacscale("aggregate", *sorted((stored_elsewhere / "metrics").glob("*.json")), "--csv", tmp_path / "s.csv",
                    "--json", output, cwd=tmp_path / "elsewhere")
    one_line(done, f"argument --json: {output} is inside {stored_elsewhere}, a finished run set (it has "
                   f"{stored_elsewhere / 'MANIFEST.sha256'} and plan.json), whose evidence is not rewritten or added "
                   "to; write it elsewhere")
    assert not output.exists()


def test_a_finished_set_by_its_real_path_makes_its_manifest_again(stored_elsewhere, tmp_path):
    done = sacscale("manifest", stored_elsewhere, "--output", stored_elsewhere / "MANIFEST.sha256", "--json",
                    stored_elsewhere / "manifest.json", cwd=tmp_path / "elsewhere")
    assert done.returncode == 0, done.stderr


def test_a_bench_folder_with_a_manifest_and_no_plan_is_the_users_to_write(tmp_path):
    """A manifest alone (`sacscale manifest` of a bench made by hand) does not make a set of a
    folder outside results/: its user goes on writing there."""
    bench = tmp_path / "bench"
    shutil.copytree(REPO / "results" / SET / "metrics", bench / "metrics")
    (bench / "MANIFEST.sha256").write_text("")
    done = sacscale("aggregate", *sorted((bench / "metrics").glob("*.json")), "--csv", bench / "s.csv",
                    "--json", bench / "summary.json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr


# a small CPU run: what the pipeline's train step gives, but for its size
TRAIN = ["train", "--devices", "cpu", "--num-envs", "4", "--batch-size", "64", "--iterations", "2"]


def test_train_log_dir_into_a_finished_set_is_refused(finished):
    """It trained into runs/new, exit 0, and the set then failed verify (`runs: not in plan.json`)."""
    log_dir = finished / "runs" / "new"
    done = sacscale(*TRAIN, "--log-dir", log_dir, "--model", finished / "model" / "g1_walk_flat.mjb")
    one_line(done, _says("--log-dir", log_dir, finished))
    assert not log_dir.exists()


def test_train_resume_of_a_finished_sets_run_is_refused(finished):
    """--resume continues the run in its own folder: a finished set's run is not trained on."""
    run = finished / "runs" / RUN
    before = sorted(p.relative_to(run) for p in run.rglob("*"))
    done = sacscale("train", "--resume", run, "--iterations", "3")
    one_line(done, _says("--resume", run, finished))
    assert sorted(p.relative_to(run) for p in run.rglob("*")) == before


def test_train_into_a_set_being_made_is_judged_by_the_trainer_alone(finished):
    """As the pipeline's train step (record-run's work folder in results/S/runs/) before the
    manifest: the set's folder is not refused; the trainer's own check of a value is reached."""
    (finished / "MANIFEST.sha256").unlink()
    (finished / "runs" / ".new.partial").mkdir()  # record-run makes its work folder before its trainer starts
    done = sacscale(*TRAIN, "--log-dir", finished / "runs" / ".new.partial", "--checkpoint-every", "-1",
                    pipeline_set=SET)
    one_line(done, "sacscale train: error: --checkpoint-every must be >= 0")


@pytest.mark.parametrize("inside", ["results/{set}/reports/x.json", "results/{set}/runs/results/x.json",
                                    "reports/{set}/figures/results/x.json"])
def test_an_output_under_a_folder_of_a_finished_set_named_like_a_set_folder_is_refused(finished, inside):
    """results/S/reports/x.json lies in the finished results/S, not in a set `x.json`: it was
    written, exit 0, and verify then named it (`extra: reports/x.json`)."""
    output = finished.parent.parent / inside.format(set=SET)
    done = sacscale("analyze-run", finished / "runs" / RUN, "--output", output)
    one_line(done, f"argument --output: {output} is inside {inside.split('/')[0]}/{SET}, a finished run set")
    assert not output.exists()


def test_record_run_into_a_finished_set_is_refused(finished, tmp_path):
    run_dir = finished / "runs" / "handrun"
    done = sacscale("record-run", "--run-dir", run_dir, "--work-dir", tmp_path / ".w.partial", "--attic",
                    tmp_path / "a", "--timeout", "10", "--", sys.executable, "-c", "pass")
    one_line(done, _says("--run-dir", run_dir, finished))
    assert not run_dir.exists() and not (tmp_path / ".w.partial").exists()
