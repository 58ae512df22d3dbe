"""Outputs written by hand into a set the pipeline is building. Before: `evaluate --output
results/S/eval/R.json` (another --seconds), `analyze-run --output results/S/metrics/R.json`
and `prepare-model --output-dir results/S/model --json results/S/model.json` run by hand
while the pipeline built S replaced its outputs, exit 0; the manifest hashed them, and the
set then failed its verification on every rerun (or verified with a hand-made model cost).
Now an output inside a set with a plan and no manifest is refused, exit 2, nothing written,
unless the command is one of the pipeline's jobs for that set (its environment names the
set); a set without a plan (made by hand) is the user's."""

import sys
from pathlib import Path

import pytest

from cli_runs import SET, one_line, sacscale

sys.path.insert(0, str(Path(__file__).parent / "evidence"))
from set_copies import copy_committed_set  # noqa: E402

RUN = "shared_r1_n1_pool7"
FAST = ["--envs-per-command", "1", "--seconds", "1.5", "--settle-s", "0.5", "--threads", "1"]


@pytest.fixture
def planned(tmp_path):
    """A copy of a set as the pipeline leaves it before its manifest: plan.json, no manifest."""
    results = copy_committed_set(tmp_path, SET)
    (results / "MANIFEST.sha256").unlink()
    (results / "manifest.json").unlink()
    return results


def _says(option, output, folder="results"):
    return (f"argument {option}: {output} is inside {folder}/{SET}, a run set the pipeline plans and has not "
            "finished: the pipeline writes it (run snakemake to finish the set), or write it elsewhere")


def _evaluate(results):
    return ["evaluate", results / "runs" / RUN / "checkpoints" / "final.pt", "--model",
            results / "model" / "g1_walk_flat.mjb", "--output", results / "eval" / f"{RUN}.json", *FAST]


def _analyze(results):
    return ["analyze-run", results / "runs" / RUN, "--output", results / "metrics" / f"{RUN}.json"]


def _prepare(results):
    return ["prepare-model", "--output-dir", results / "model", "--json", results / "model.json",
            "--num-envs", "2", "--steps", "1"]


def _contents(results):
    return {p: p.read_bytes() for p in sorted(results.parent.parent.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("argv, option, name", [
    (_evaluate, "--output", f"eval/{RUN}.json"),
    (_analyze, "--output", f"metrics/{RUN}.json"),
    (_prepare, "--output-dir", "model"),
])
def test_a_hand_command_into_a_planned_unfinished_set_is_refused(planned, argv, option, name):
    before = _contents(planned)
    one_line(sacscale(*argv(planned)), _says(option, planned / name))
    assert _contents(planned) == before


def test_an_output_in_the_sets_report_folder_is_refused(planned, tmp_path):
    output = planned.parent.parent / "reports" / SET / "summary.json"
    done = sacscale("aggregate", *sorted((planned / "metrics").glob("*.json")), "--csv", tmp_path / "s.csv",
                    "--json", output)
    one_line(done, _says("--json", output, "reports"))
    assert not output.exists() and not (tmp_path / "s.csv").exists()


def test_the_pipeline_of_another_set_is_refused_too(planned):
    before = _contents(planned)
    one_line(sacscale(*_analyze(planned), pipeline_set="other"), _says("--output", planned / f"metrics/{RUN}.json"))
    assert _contents(planned) == before


@pytest.mark.parametrize("argv, written", [
    (_evaluate, f"eval/{RUN}.json"),
    (_analyze, f"metrics/{RUN}.json"),
    (_prepare, "model.json"),
])
def test_the_pipelines_own_job_writes_there(planned, argv, written):
    (planned / written).unlink()
    done = sacscale(*argv(planned), pipeline_set=SET)
    assert done.returncode == 0, done.stderr
    assert (planned / written).is_file()


def test_a_set_without_a_plan_is_the_users(planned):
    (planned / "plan.json").unlink()
    (planned / "metrics" / f"{RUN}.json").unlink()
    done = sacscale(*_analyze(planned))
    assert done.returncode == 0, done.stderr
    assert (planned / "metrics" / f"{RUN}.json").is_file()


@pytest.mark.parametrize("inside", ["reports/x.json", "runs/results/x.json", "eval/reports/S2/x.json"])
def test_an_output_under_a_folder_of_the_set_named_like_a_set_folder_is_refused(planned, inside):
    """results/S/reports/x.json lies in results/S: the inner reports/ (or results/) is the
    set's own folder, not another set's. It was written, exit 0."""
    output = planned / inside
    before = _contents(planned)
    one_line(sacscale(*_analyze(planned)[:2], "--output", output), _says("--output", output))
    assert _contents(planned) == before and not output.parent.exists()


def test_prepare_models_json_under_the_sets_reports_folder_is_refused(planned, tmp_path):
    output = planned / "reports" / "model.json"
    done = sacscale("prepare-model", "--output-dir", tmp_path / "m", "--json", output, "--num-envs", "2",
                    "--steps", "1")
    one_line(done, _says("--json", output))
    assert not output.exists() and not (tmp_path / "m").exists()


def test_a_report_folder_of_the_set_holding_a_results_folder_is_refused(planned):
    output = planned.parent.parent / "reports" / SET / "figures" / "results" / "x.json"
    done = sacscale(*_analyze(planned)[:2], "--output", output)
    one_line(done, _says("--output", output, "reports"))
    assert not output.exists()


def _record_run(results, **folders):
    """record-run as the pipeline's train rule gives it, each folder inside the set unless given."""
    given = {"--run-dir": results / "runs" / "handrun", "--work-dir": results / "runs" / ".handrun.partial",
             "--attic": results.parent / "attic", "--state-dir": results.parent / "state"} | folders
    return ["record-run", *[str(w) for pair in given.items() for w in pair], "--timeout", "10", "--",
            sys.executable, "-c", "pass"]


@pytest.mark.parametrize("option, inside", [
    ("--run-dir", "runs/handrun"),
    ("--work-dir", f"runs/.{RUN}.partial"),
    ("--attic", "attempts"),
    ("--state-dir", "state"),
])
def test_record_run_by_hand_into_a_planned_set_is_refused(planned, tmp_path, option, inside):
    """Its folders were not judged: the command ran, and a trainer's run would have been moved
    into the planned set's runs/ (or set the pipeline's own work folder aside)."""
    outside = {"--run-dir": tmp_path / "r", "--work-dir": tmp_path / ".r.partial", "--attic": tmp_path / "a",
               "--state-dir": tmp_path / "s"}
    before = _contents(planned)
    done = sacscale(*_record_run(planned, **(outside | {option: planned / inside})))
    one_line(done, _says(option, planned / inside))
    assert _contents(planned) == before
    assert not any(p.exists() for p in outside.values())


def test_the_pipelines_own_record_run_is_not_refused_by_the_set(planned):
    """Its job for the set passes the set's guard; the command itself then runs (and fails on
    the trivial command's missing event file, which is record-run's own word)."""
    done = sacscale(*_record_run(planned), pipeline_set=SET)
    assert "a run set the pipeline plans" not in done.stderr
    assert "Traceback" not in done.stderr


def _kept_on_another_disk(planned, tmp_path, whole_results):
    """The checkout's results/ (or only its results/S) moved to another folder and linked
    back: the set's real path has no parent named results/."""
    moved = tmp_path / "disk" / "store"
    if whole_results:
        moved.parent.mkdir()
        planned.parent.rename(moved)
        planned.parent.symlink_to(moved)
        return moved / SET
    moved.mkdir(parents=True)
    planned.rename(moved / SET)
    planned.symlink_to(moved / SET)
    return moved / SET


@pytest.mark.parametrize("whole_results", [True, False], ids=["results-linked", "set-linked"])
def test_a_planned_set_written_by_its_real_path_on_another_disk_is_refused(planned, tmp_path, whole_results):
    """Written by its real path, the set was not found (its folder's parent is not named
    results/): the output was written into the planned set, exit 0."""
    real = _kept_on_another_disk(planned, tmp_path, whole_results)
    output = real / "metrics" / f"{RUN}.json"
    before = _contents(real)
    done = sacscale(*_analyze(real)[:2], "--output", output, cwd=planned.parent.parent)
    one_line(done, _says("--output", output))
    assert _contents(real) == before


def test_a_finished_set_written_by_its_real_path_on_another_disk_is_refused(planned, tmp_path):
    (planned / "MANIFEST.sha256").write_text("")
    real = _kept_on_another_disk(planned, tmp_path, whole_results=True)
    output = real / "x.json"
    done = sacscale(*_analyze(real)[:2], "--output", output, cwd=planned.parent.parent)
    one_line(done, f"argument --output: {output} is inside results/{SET}, a finished run set")
    assert not output.exists()


@pytest.mark.parametrize("finished", [False, True], ids=["planned", "finished"])
def test_a_set_on_another_disk_written_by_its_real_path_from_the_checkouts_src_is_refused(planned, tmp_path,
                                                                                        finished):
    """Run from the checkout's src/ (not its root), the checkout's results/ link was not
    looked at: the output was written into the set by its real path, exit 0."""
    checkout = planned.parent.parent
    (checkout / "Snakefile").write_text("")
    (checkout / "src").mkdir()
    if finished:
        (planned / "MANIFEST.sha256").write_text("")
    real = _kept_on_another_disk(planned, tmp_path, whole_results=True)
    output = real / "x.json"
    done = sacscale(*_analyze(real)[:2], "--output", output, cwd=checkout / "src")
    one_line(done, f"argument --output: {output} is inside results/{SET}, a "
             + ("finished run set" if finished else "run set the pipeline plans"))
    assert not output.exists()


def test_a_folder_of_the_set_kept_on_another_disk_written_by_its_real_path_is_refused(planned, tmp_path):
    """results/S/runs a link to another disk: written by that disk's path, the output went
    into the planned set's runs/, exit 0 (only links at results/ and its entries were followed)."""
    runs = tmp_path / "disk" / "runs_x"
    runs.parent.mkdir()
    (planned / "runs").rename(runs)
    (planned / "runs").symlink_to(runs)
    output = runs / "m.json"
    done = sacscale(*_analyze(planned)[:2], "--output", output, cwd=planned.parent.parent)
    one_line(done, _says("--output", output))
    assert not output.exists()
