"""The run set's folders (results/<set>, reports/<set>, logs/<set>, benchmarks/<set>) are
judged before any rule runs: with a shared (1777) results/ or logs/, another user's folder at
a set's name had the plan written into it, her link there removed and the plan's log written
in its place, and through a link she planted again the pipeline (root) wrote over a file of
root's outside the checkout. Such a folder, one above it of hers, and one of ours that others
may write in, are refused in one line naming the folder, before any rule runs."""

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline_helpers import copy_workflow, snakemake
from sacscale.pipeline import set_folders
from sacscale.pipeline.plan_values import PlanError
from sacscale.pipeline.set_folders import check_set_folders, open_new_log, set_folder_problem

THEIRS = 1001
SRC = str(Path(set_folders.__file__).parents[2])
as_root = pytest.mark.skipif(os.getuid() != 0, reason="giving a folder to another user needs root")


@pytest.fixture
def workflow_dir(tmp_path):
    work = copy_workflow(tmp_path / "wf")
    for shared in ("results", "logs"):
        (work / shared).mkdir(mode=0o1777)
        (work / shared).chmod(0o1777)  # shared, as /tmp: a sticky folder every user makes folders in
    return work


def hers(folder: Path) -> Path:
    folder.mkdir(mode=0o777)
    folder.chmod(0o777)
    os.chown(folder, THEIRS, THEIRS)
    return folder


def refused(done, says: str) -> None:
    said = done.stdout + done.stderr  # Snakemake prints a config error on stdout
    assert done.returncode == 1, said  # as Snakemake ends for every config error
    assert f"config error: run_set {says}" in said, said
    assert "never into a folder another user can change" in said, said
    assert "Job stats" not in said and "rule plan" not in said, said


@as_root
def test_her_results_folder_is_refused_and_left_empty(workflow_dir):
    folder = hers(workflow_dir / "results" / "p68eve")
    done = snakemake(workflow_dir, "--cores", "1", "--until", "plan", "--config", "preset=cpu", "run_set=p68eve")
    refused(done, f"p68eve: results/p68eve: belongs to uid {THEIRS}, another user")
    assert list(folder.iterdir()) == []


@as_root
def test_her_logs_folder_and_link_are_left_alone(workflow_dir, tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("ROOTDATA\n")
    link = hers(workflow_dir / "logs" / "p68ev2") / "plan.log"
    link.symlink_to(victim)
    os.lchown(link, THEIRS, THEIRS)
    done = snakemake(workflow_dir, "--cores", "1", "--until", "plan", "--config", "preset=cpu", "run_set=p68ev2")
    refused(done, f"p68ev2: logs/p68ev2: belongs to uid {THEIRS}, another user")
    assert link.is_symlink() and victim.read_text() == "ROOTDATA\n"
    assert not (workflow_dir / "results" / "p68ev2").exists()


@as_root
def test_a_folder_of_hers_above_a_set_folder_is_refused(workflow_dir):
    os.chown(hers(workflow_dir / "benchmarks"), THEIRS, THEIRS)
    done = snakemake(workflow_dir, "-n", "--cores", "1", "--config", "preset=cpu", "run_set=p68ev4")
    refused(done, f"p68ev4: {workflow_dir / 'benchmarks'} (where benchmarks/p68ev4 would be made): belongs to uid")


def test_a_set_folder_of_ours_that_others_may_write_in_is_refused(workflow_dir):
    (workflow_dir / "logs" / "open").mkdir()
    (workflow_dir / "logs" / "open").chmod(0o1777)  # the sticky bit stops no one making a link at a log's name
    done = snakemake(workflow_dir, "-n", "--cores", "1", "--config", "preset=cpu", "run_set=open")
    refused(done, "open: logs/open: is writable by other users (mode 1777)")


def test_our_own_set_folders_pass(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "results").mkdir(mode=0o1777)
    (tmp_path / "results").chmod(0o1777)
    (tmp_path / "results" / "mine").mkdir(mode=0o755)
    (tmp_path / "results" / "mine").chmod(0o755)
    assert set_folder_problem("results/mine") is None
    assert set_folder_problem("logs/mine") is None  # neither made yet: judged by the checkout


def test_a_log_is_opened_as_a_new_file_never_through_a_link(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("ROOTDATA\n")
    log = tmp_path / "plan.log"
    log.symlink_to(victim)
    with open_new_log(log) as fh:
        print("preset cpu", file=fh)
    assert victim.read_text() == "ROOTDATA\n"
    assert not log.is_symlink() and log.read_text() == "preset cpu\n"
    with open_new_log(log) as fh:  # an old log of ours: replaced
        print("again", file=fh)
    assert log.read_text() == "again\n"


SET_FOLDERS = ["results/um", "reports/um", "logs/um", "benchmarks/um"]
UNDER_UMASK = ("import os, sys; os.umask(int(sys.argv[1], 8)); "
               "from sacscale.pipeline.set_folders import check_set_folders; "
               f"check_set_folders({SET_FOLDERS!r}, 'um'); "
               "os.makedirs('logs/um/train'); open('benchmarks/um/plan.tsv', 'w').close()")


@pytest.mark.parametrize("umask", ["000", "002", "077"])
def test_the_set_folders_are_made_closed_to_others_whatever_the_umask(tmp_path, umask):
    """Under umask 000 Snakemake made logs/<set> and benchmarks/<set> 0777 after the check had
    passed them absent: another user's link at benchmarks/<set>/plan.tsv had a root file
    overwritten. The check makes them itself (0755, parents too), and what is made later in
    the pipeline's process is closed to others as well."""
    (tmp_path / "results").mkdir(mode=0o1777)
    (tmp_path / "results").chmod(0o1777)  # a shared sticky results/, as /tmp
    done = subprocess.run([sys.executable, "-c", UNDER_UMASK, umask], cwd=tmp_path, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": SRC}, timeout=60)
    assert done.returncode == 0, done.stderr
    for folder in [*SET_FOLDERS, "reports", "logs", "benchmarks"]:
        assert stat.S_IMODE((tmp_path / folder).stat().st_mode) == 0o755, folder
    assert stat.S_IMODE((tmp_path / "results").stat().st_mode) == 0o1777  # there already: left as it was
    assert not stat.S_IMODE((tmp_path / "logs/um/train").stat().st_mode) & 0o022
    assert not stat.S_IMODE((tmp_path / "benchmarks/um/plan.tsv").stat().st_mode) & 0o022


def test_the_set_folders_of_ours_are_passed_again_by_each_jobs_parse(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    old = os.umask(0)
    try:
        check_set_folders(SET_FOLDERS, "um")
        check_set_folders(SET_FOLDERS, "um")  # each job parses the workflow again: its own folders pass
        assert os.umask(0) == 0o022
    finally:
        os.umask(old)
    assert all((tmp_path / folder).is_dir() for folder in SET_FOLDERS)


def test_a_set_folder_that_cannot_be_made_is_named(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "logs").write_text("a file where a folder goes\n")
    old = os.umask(0o022)
    try:
        with pytest.raises(PlanError, match=r"run_set um: logs/um: cannot be made \(.*logs/um: Not a directory\)"):
            check_set_folders(SET_FOLDERS, "um")
    finally:
        os.umask(old)
