"""Faults 5 and 6 at the command line: damaged event files, a run without events, and
evidence tampering, each through `sacscale analyze-run` and `sacscale verify`.

Guarantee: analyze-run exits 1 naming the file (or directory) and writes no metrics;
verify exits 1 naming every damaged, missing or added file, and every run whose
metrics no longer recompute, even when the manifest was rebuilt after the damage (so
the hashes agree and only the recomputation can tell).

Unit-level tests of the same faults: tests/analysis/test_event_reading.py (truncated,
corrupted, empty, missing files; no event file; no rank 0), tests/analysis/
test_run_metrics.py (analyze-run CLI), tests/evidence/test_manifest_verify.py (tamper,
delete, add; a metric that does not recompute), and `snakemake verify` on a whole run
set in tests/workflow/pipeline_helpers.py::check_tampering_is_caught.
"""

import json
import shutil

import pytest
from faultkit import record
from synthetic_runs import simple_run

from sacscale.analysis.metrics import analyze_run
from sacscale.evidence import manifest


@pytest.fixture
def root(tmp_path):
    """A run set of two runs (two ranks each), their metrics, a summary and the manifest."""
    root = tmp_path / "results" / "S"
    for config, rate in (("n1", 100.0), ("n2", 190.0)):
        run = simple_run(root / "runs" / f"p_r1_{config}", config, 1, rate, ranks=2)
        (run / "train.log").write_text(f"training {config}\n")
        (root / "metrics").mkdir(parents=True, exist_ok=True)
        (root / "metrics" / f"{run.name}.json").write_text(json.dumps(analyze_run(run)))
    (root / "summary.csv").write_text("run,rate\n")
    manifest.write(root)
    return root


@pytest.fixture
def cli(sacscale_main):
    """The CLI in this process (its exit status and output, as a subprocess's)."""
    return sacscale_main


def _event_file(root, rank=1):
    return next((root / "runs" / "p_r1_n2" / "tb" / f"rank{rank}").glob("events.out.tfevents.*"))


def truncate(root):
    path = _event_file(root)
    path.write_bytes(path.read_bytes()[:-7])
    return path, "truncated or corrupted"


def flip_byte(root):
    path = _event_file(root)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x10
    path.write_bytes(bytes(data))
    return path, "truncated or corrupted"


def empty(root):
    path = _event_file(root)
    path.write_bytes(b"")
    return path, "empty (0 bytes)"


def no_event_file(root):
    path = _event_file(root)
    path.unlink()
    return path.parent, "no event file"


def no_events_at_all(root):
    tb = root / "runs" / "p_r1_n2" / "tb"
    shutil.rmtree(tb)
    return tb, "the run has no TensorBoard directory"


@pytest.mark.parametrize("damage", [truncate, flip_byte, empty, no_event_file, no_events_at_all],
                         ids=lambda f: f.__name__)
def test_damaged_events_fail_analysis_and_verification_naming_the_file(root, tmp_path, damage, cli):
    named, what = damage(root)
    manifest.write(root)  # re-manifested after the damage: the hashes agree now

    out = tmp_path / "metrics.json"
    analysis = cli("analyze-run", str(root / "runs" / "p_r1_n2"), "--output", str(out))
    check = cli("verify", str(root), "--output", str(tmp_path / "verify.json"))
    record("bad evidence", damage=damage.__name__, analyze_exit=analysis.returncode, verify_exit=check.returncode,
           analyze_message=analysis.stderr.strip(), verify_message=check.stderr.strip())

    assert analysis.returncode == 1
    assert str(named) in analysis.stderr and what in analysis.stderr, analysis.stderr
    assert not out.exists()
    assert check.returncode == 1
    assert "metric: p_r1_n2: cannot recompute" in check.stderr and named.name in check.stderr, check.stderr
    assert "p_r1_n1" not in check.stderr  # the intact run is not blamed
    result = json.loads((tmp_path / "verify.json").read_text())
    assert result["ok"] is False and result["changed"] == result["missing"] == result["extra"] == []


def test_each_tampered_deleted_and_added_file_is_named(root, cli):
    """Fault 6 with several of each at once: every one is named, nothing else is."""
    changed = [_event_file(root, 0), root / "metrics" / "p_r1_n1.json", root / "runs" / "p_r1_n2" / "run.json"]
    for path in changed:
        data = bytearray(path.read_bytes())
        data[-2] ^= 0x01  # one byte
        path.write_bytes(bytes(data))
    deleted = [root / "summary.csv", root / "runs" / "p_r1_n1" / "train.log"]
    for path in deleted:
        path.unlink()
    added = [root / "runs" / "p_r1_n1" / "tb" / "rank0" / "events.out.tfevents.999.extra", root / "notes.txt"]
    for path in added:
        path.write_text("added after the manifest\n")

    check = cli("verify", str(root))
    record("tampering", verify_exit=check.returncode, message=check.stderr.strip())
    assert check.returncode == 1
    lines = [line.strip() for line in check.stderr.splitlines()]
    rel = lambda p: p.relative_to(root).as_posix()  # noqa: E731
    for path in changed:
        assert any(line.startswith(f"changed: {rel(path)} (sha256") for line in lines), (path, check.stderr)
    for path in deleted:
        assert f"missing: {rel(path)}" in lines, (path, check.stderr)
    for path in added:
        assert f"extra: {rel(path)} (not in the manifest)" in lines, (path, check.stderr)
    file_problems = [line for line in lines if line.split(":")[0] in ("changed", "missing", "extra")]
    assert len(file_problems) == len(changed) + len(deleted) + len(added), check.stderr
