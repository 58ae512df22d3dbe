"""One command at a time writes into a run set. Two `manifest S --scope --keep-best ...` at
once both exited 0 and left MANIFEST.sha256 of one and manifest.json of the other (one
listing the policy the other moved): verify failed. Now the manifest step holds the set's
lock (`.<set>.lock` beside it) and a second manifest, or a verify writing the set's
verify.json, is refused at once with one line naming the holder; the first finishes and the
set verifies. The first is stopped at a named function (paused_sacscale.py) while the
second runs: no timing decides the order."""

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from cli_runs import one_line, sacscale
from paused_runs import finished, started_paused
from sacscale.report.build import write_report
from sacscale.report.set_inputs import set_inputs
from set_copies import edit_record

PUT_BACK = "shared_r1_n2_shared"  # a run whose policy the set leaves out
POLICY = Path("runs") / PUT_BACK / "checkpoints" / "final.pt"


@pytest.fixture
def policy_put_back(work):
    """The set with a left-out policy back in it (its evaluation records that policy's hash),
    for --scope --keep-best to move out again."""
    data = b"a policy put back into the set"
    (work / POLICY).parent.mkdir(parents=True, exist_ok=True)
    (work / POLICY).write_bytes(data)
    edit_record(work, f"eval/{PUT_BACK}.json",
                lambda record: record.update(checkpoint_sha256=hashlib.sha256(data).hexdigest()))
    return work


def scoped(root: Path, left_out: Path) -> list:
    return ["manifest", root, "--scope", "--keep-best", *sorted((root / "eval").glob("*.json")),
            "--left-out-dir", left_out]


def refusal(root: Path, pid: int, undone: str) -> str:
    return (f"{root}: another sacscale manifest or verify is writing into this run set (pid {pid} holds "
            f"{root.parent}/.{root.name}.lock); {undone}: run this one once it has finished")


def without_report(root: Path) -> Path:
    """The set as the pipeline's verification finds it: its report not yet written (a set's
    own verify.json is written only then, in the pipeline's form)."""
    shutil.rmtree(root.parent.parent / "reports" / root.name)
    return root


def report_and_verify(root: Path) -> subprocess.CompletedProcess:
    """The set's report written again over its new manifest (the pipeline's order), then verify."""
    reports = root.parent.parent / "reports" / root.name
    write_report(output_md=reports / "report.md", output_html=reports / "report.html", figures_dir=reports / "figures",
                 **set_inputs(root, reports))
    return sacscale("verify", root)


def test_a_second_manifest_is_refused_and_the_first_leaves_one_manifest(policy_put_back, tmp_path):
    root = policy_put_back
    first = started_paused(tmp_path, "sacscale.evidence.scope:leave_out_policies", *scoped(root, tmp_path / "lo"))
    second = sacscale(*scoped(root, tmp_path / "lo"))
    one_line(second, f"sacscale manifest: error: {refusal(root, first.pid, 'nothing was moved or written')}")
    assert (root / POLICY).is_file()  # the second moved nothing
    done = finished(tmp_path, first)
    assert done.returncode == 0, done.stderr
    assert not (root / POLICY).exists() and (tmp_path / "lo" / PUT_BACK / "final.pt").is_file()
    listed = (root / "MANIFEST.sha256").read_text().splitlines()
    assert json.loads((root / "manifest.json").read_text())["files"] == len(listed)
    assert not (root.parent / f".{root.name}.lock").exists()  # removed with the lock
    verified = report_and_verify(root)
    assert verified.returncode == 0, verified.stderr


def test_verify_into_the_set_is_refused_while_a_manifest_writes_it(policy_put_back, tmp_path):
    root = without_report(policy_put_back)
    before = (root / "verify.json").read_bytes()
    first = started_paused(tmp_path, "sacscale.commands.manifest:write", *scoped(root, tmp_path / "lo"))
    second = sacscale("verify", root, "--report-pending", "--output", root / "verify.json")
    one_line(second, f"sacscale verify: error: {refusal(root, first.pid, 'nothing was written')}")
    assert (root / "verify.json").read_bytes() == before
    assert finished(tmp_path, first).returncode == 0


def test_a_manifest_is_refused_while_verify_writes_the_sets_verdict(work, tmp_path):
    without_report(work)
    first = started_paused(tmp_path, "sacscale.evidence.verify:verify", "verify", work, "--report-pending",
                           "--output", work / "verify.json")  # the pipeline's verification
    second = sacscale("manifest", work)
    one_line(second, f"sacscale manifest: error: {refusal(work, first.pid, 'nothing was moved or written')}")
    done = finished(tmp_path, first)
    assert done.returncode == 0, done.stderr
    assert json.loads((work / "verify.json").read_text())["ok"] is True
