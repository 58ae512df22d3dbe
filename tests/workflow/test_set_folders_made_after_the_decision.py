"""The set's folders (results/<set>, reports/<set>, logs/<set>, benchmarks/<set>) are made only
after the decision about the set, and never by a dry run. A report folder copied to a new name
(no results beside it) was refused as `results/<set>/ exists but has no plan.json ... (nothing
under results/ or reports/ was changed)`, while that very invocation had made results/<set> and
logs/<set> before deciding, and the advice verified the empty results/<set>; and a dry run of a
new name left empty set folders behind."""

import stat

import pytest

from pipeline_helpers import copy_workflow, snakemake
from sacscale.evidence.runset import RunSetError, RunSetState, decide

SET_ROOTS = ("results", "reports", "logs", "benchmarks")


@pytest.fixture
def workflow_dir(tmp_path):
    return copy_workflow(tmp_path / "wf")


def made(work, run_set):
    return [f"{root}/{run_set}" for root in SET_ROOTS if (work / root / run_set).exists()]


def copied_report(work, run_set):
    """A report folder with no results beside it, as `cp -a reports/h200x1 reports/<set>` makes."""
    (work / "reports" / run_set / "figures").mkdir(parents=True)
    (work / "reports" / run_set / "report.md").write_text("# Report\n")
    (work / "reports" / run_set / "figures" / "throughput.png").write_bytes(b"\x89PNG\r\n")


def test_a_dry_run_of_a_new_set_makes_no_folder(workflow_dir):
    proc = snakemake(workflow_dir, "-n", "--cores", "1", "--config", "preset=cpu", "run_set=p83n")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "train_run" in proc.stdout + proc.stderr
    assert made(workflow_dir, "p83n") == []


@pytest.mark.parametrize("mode", [["--lint"], ["--list-rules"], ["--cores", "1", "--summary"],
                                  ["--cores", "1", "--unlock"]], ids=["lint", "list-rules", "summary", "unlock"])
def test_a_command_that_runs_no_job_makes_no_folder(workflow_dir, mode):
    # CI's lint left empty folders of the CPU set in the checkout, which a later test took for a set
    proc = snakemake(workflow_dir, *mode, "--config", "preset=cpu", "run_set=p93l")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert made(workflow_dir, "p93l") == []


@pytest.mark.parametrize("dry", [["-n"], []], ids=["dry", "real"])
def test_a_report_folder_alone_is_refused_by_its_name_and_nothing_is_made(workflow_dir, dry):
    copied_report(workflow_dir, "p83r")
    proc = snakemake(workflow_dir, *dry, "--cores", "1", "--until", "plan", "--config", "preset=cpu",
                     "run_set=p83r")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert ("run set 'p83r': reports/p83r/ holds 2 file(s) but results/p83r/ holds none, not even a "
            "plan.json (this report was not made here by this pipeline)") in out
    assert "move reports/p83r/ away (or remove it)" in out and "--config run_set=p83r_new" in out
    assert "sacscale verify results/p83r" not in out and "Traceback" not in out
    assert made(workflow_dir, "p83r") == ["reports/p83r"]  # the copy only: nothing made beside it


def test_a_real_run_still_makes_its_folders_closed_to_others(workflow_dir):
    proc = snakemake(workflow_dir, "--cores", "1", "--until", "plan", "--config", "preset=cpu", "run_set=p83p")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert made(workflow_dir, "p83p") == [f"{root}/p83p" for root in SET_ROOTS]
    for root in SET_ROOTS:
        assert stat.S_IMODE((workflow_dir / root / "p83p").stat().st_mode) == 0o755, root
    assert (workflow_dir / "results" / "p83p" / "plan.json").is_file()


def test_a_dry_run_names_a_set_folder_that_could_not_be_made(workflow_dir):
    (workflow_dir / "benchmarks").write_text("a file where a folder goes\n")
    proc = snakemake(workflow_dir, "-n", "--cores", "1", "--config", "preset=cpu", "run_set=p83f")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "config error: run_set p83f: benchmarks/p83f: cannot be made (" in out
    assert "benchmarks/p83f: Not a directory)" in out
    assert made(workflow_dir, "p83f") == []


def _state(**kw):
    return RunSetState(**{"name": "s", "results": "results/s", "reports": "reports/s", **kw})


@pytest.mark.parametrize("state, says", [
    (_state(files=3, report_files=3), "reports/s/ holds 3 file(s) but results/s/ holds none"),
    (_state(files=3, report_files=3, committed=3),
     "reports/s/ holds committed evidence (3 file(s) tracked by git) but results/s/ holds none"),
])
def test_a_report_folder_alone_is_named_with_advice_that_fits(state, says):
    with pytest.raises(RunSetError) as err:
        decide(state, set())
    message = str(err.value)
    assert message.startswith(f"run set 's': {says}, not even a plan.json"), message
    assert "move reports/s/ away" in message and "sacscale verify" not in message


def test_a_results_folder_without_a_plan_is_named_as_before():
    with pytest.raises(RunSetError) as err:
        decide(_state(files=3, report_files=1), set())
    message = str(err.value)
    assert message.startswith("run set 's': results/s/ exists but has no plan.json"), message
    assert "sacscale verify results/s" in message
