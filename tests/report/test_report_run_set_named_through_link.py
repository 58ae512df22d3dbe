"""`report --run-set /tmp/lnk/S` with /tmp/lnk a link to a checkout's results/ took its
report folder beside the name as written (/tmp/reports/S, made in the shared /tmp): a fresh
page there, while the set's own (committed) report, the one verify checks, was refused under
its plain name and under `results/../results/S`. The report folder is now the one beside the
set where it lies, found as verify finds it: one set, one rule, however it is named."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cli_runs import sacscale

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "evidence"))
from set_copies import copy_committed_set  # noqa: E402

SET = "h200x1_shared_short"


@pytest.fixture()
def committed(tmp_path):
    """A copy of the set in a checkout of its own whose git tracks its report, and a link to
    the checkout's results/ from another folder."""
    root = copy_committed_set(tmp_path, SET)
    checkout = root.parent.parent
    subprocess.run(["git", "init", "-q", str(checkout)], check=True)
    subprocess.run(["git", "-C", str(checkout), "add", f"reports/{SET}"], check=True)
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "lnk").symlink_to(checkout / "results")
    return checkout


def _spellings(checkout: Path) -> dict[str, Path]:
    return {"plain": checkout / "results" / SET, "dot_dot": checkout / "results" / ".." / "results" / SET,
            "through_link": checkout.parent / "elsewhere" / "lnk" / SET}


@pytest.mark.parametrize("spelling", ["plain", "dot_dot", "through_link"])
def test_a_committed_report_is_refused_however_the_set_is_named(committed, spelling):
    done = sacscale("report", "--run-set", _spellings(committed)[spelling])
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.strip().startswith(f"sacscale report: reports/{SET}/ holds a committed report"), done.stderr
    assert "\n" not in done.stderr.strip()
    assert not (committed.parent / "elsewhere" / "reports").exists()


def test_a_set_named_through_a_link_writes_its_report_beside_the_set(committed):
    """Not committed: the report is rebuilt in the set's own report folder, none is made
    beside the link."""
    subprocess.run(["git", "-C", str(committed), "rm", "-q", "-r", "--cached", f"reports/{SET}"], check=True)
    page = committed / "reports" / SET / "report.md"
    os.utime(page, (0, 0))
    done = sacscale("report", "--run-set", _spellings(committed)["through_link"])
    assert done.returncode == 0, done.stdout + done.stderr
    assert page.stat().st_mtime > 0
    assert not (committed.parent / "elsewhere" / "reports").exists()
