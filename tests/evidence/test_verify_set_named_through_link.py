"""A set named through a link (results/S -> another checkout's results/S): the report a
reader of the link's checkout opens is reports/S beside the link, which verify would not
read (it checks the one beside the target); such a set is refused unless both are one."""

import shutil
import subprocess
import sys

import pytest
from set_copies import copy_committed_set, edit_text

from sacscale.evidence.manifest import ManifestError
from sacscale.evidence.verify import canonical_root, verify

SET = "h200x1_shared_short"


def _linked(tmp_path):
    """B holds the set and its report; A/repo/results/S links to B's set. Returns A's repo."""
    target = copy_committed_set(tmp_path / "B", SET)
    repo = tmp_path / "A" / "repo"
    (repo / "results").mkdir(parents=True)
    (repo / "reports").mkdir()
    (repo / "results" / SET).symlink_to(target)
    return repo, target


def test_a_forged_page_beside_the_link_is_refused(tmp_path):
    repo, target = _linked(tmp_path)
    shutil.copytree(target.parent.parent / "reports" / SET, repo / "reports" / SET)
    edit_text(repo / "reports" / SET / "report.md", "x", "y")  # the page a reader of A opens
    given = repo / "results" / SET
    says = (f"{given}: a link to {target}, whose report beside the link ({repo / 'reports' / SET}) is not its "
            f"target's {target.parent.parent / 'reports' / SET}, the one verify would check")
    with pytest.raises(ManifestError, match="^" + says.replace("(", r"\(").replace(")", r"\)")):
        verify(given)
    done = subprocess.run([sys.executable, "-m", "sacscale.cli", "verify", f"results/{SET}"], cwd=repo,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 1
    assert done.stderr.startswith(f"sacscale verify: error: results/{SET}: a link to {target}, whose report "
                                  f"beside the link ({repo / 'reports' / SET}) is not"), done.stderr


def test_a_link_whose_report_is_the_targets_too_is_checked_as_before(tmp_path):
    repo, target = _linked(tmp_path)
    (repo / "reports" / SET).symlink_to(target.parent.parent / "reports" / SET)
    assert canonical_root(repo / "results" / SET) == target


def test_a_link_with_no_page_beside_it_is_checked_as_its_target(tmp_path):
    """Nothing beside the link (the pipeline's own verify before the report exists, or a
    checkout holding only results/): no page there to mislead a reader, so the set is checked
    where it lies, with the report beside its target, if any."""
    repo, target = _linked(tmp_path)
    assert canonical_root(repo / "results" / SET) == target
    shutil.rmtree(target.parent.parent / "reports" / SET)
    assert canonical_root(repo / "results" / SET) == target
