"""The evidence manifest (sha256sum format) and its verification."""

import json
import shutil
import subprocess

import pytest

from sacscale.analysis.metrics import analyze_run
from sacscale.evidence import manifest
from sacscale.evidence.verify import verify
from synthetic_runs import simple_run


@pytest.fixture
def root(tmp_path):
    """A small run set: two runs, their metrics, a summary, then the manifest."""
    root = tmp_path / "results" / "S"
    for config, rate in (("n1", 100.0), ("n2", 190.0)):
        run = simple_run(root / "runs" / f"p_r1_{config}", config, 1, rate)
        (run / "train.log").write_text(f"training {config}\n")
        (root / "metrics").mkdir(parents=True, exist_ok=True)
        (root / "metrics" / f"{run.name}.json").write_text(json.dumps(analyze_run(run)))
    (root / "summary.csv").write_text("run,rate\n")
    manifest.write(root)
    return root


def test_manifest_lines_and_summary(root):
    lines = (root / "MANIFEST.sha256").read_text().splitlines()
    paths = [line.split("  ", 1)[1] for line in lines]
    assert paths == sorted(paths)
    assert "summary.csv" in paths and "runs/p_r1_n1/train.log" in paths and "runs/p_r1_n1/run.json" in paths
    assert not {"MANIFEST.sha256", "manifest.json", "verify.json"} & set(paths)
    digest = manifest.sha256_file(root / "summary.csv")
    assert f"{digest}  summary.csv" in lines
    info = json.loads((root / "manifest.json").read_text())
    assert info["files"] == len(lines)
    assert info["bytes"] == sum((root / p).stat().st_size for p in paths)
    assert info["by_top_level"]["runs"]["files"] == sum(p.startswith("runs/") for p in paths)


@pytest.mark.skipif(shutil.which("sha256sum") is None, reason="coreutils sha256sum not installed")
def test_sha256sum_can_check_it(root):
    proc = subprocess.run(["sha256sum", "--check", "--quiet", "MANIFEST.sha256"], cwd=root,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_untouched_evidence_verifies(root):
    result = verify(root)
    assert result.ok, result.problems()
    assert result.runs_checked == 2 and result.files_checked > 0


def test_the_hashed_line_names_the_manifest_verify_read(root, tmp_path):
    assert verify(root).covered[0].endswith(f"under {root} (against MANIFEST.sha256)")
    elsewhere = tmp_path / "copy.sha256"
    shutil.copy(root / "MANIFEST.sha256", elsewhere)
    assert verify(root, elsewhere).covered[0].endswith(f"under {root} (against {elsewhere})")


def test_tamper_delete_add_are_each_named(root):
    log = root / "runs" / "p_r1_n1" / "train.log"
    data = bytearray(log.read_bytes())
    data[0] ^= 0x01  # one byte
    log.write_bytes(bytes(data))
    (root / "summary.csv").unlink()
    (root / "runs" / "p_r1_n2" / "notes.txt").write_text("added later\n")

    result = verify(root)
    assert not result.ok
    assert [c.split(" ")[0] for c in result.changed] == ["runs/p_r1_n1/train.log"]
    assert result.missing == ["summary.csv"]
    assert result.extra == ["runs/p_r1_n2/notes.txt"]
    text = "\n".join(result.problems())
    for name in ("changed: runs/p_r1_n1/train.log", "missing: summary.csv", "extra: runs/p_r1_n2/notes.txt"):
        assert name in text


def test_metric_that_does_not_recompute_is_named(root):
    path = root / "metrics" / "p_r1_n2.json"
    stored = json.loads(path.read_text())
    stored["steady_env_steps_per_s"] = 999.0
    path.write_text(json.dumps(stored))
    manifest.write(root)  # the hashes agree; only the recomputation can tell
    result = verify(root)
    assert result.changed == result.missing == result.extra == []
    assert len(result.metrics) == 1
    assert result.metrics[0].startswith("p_r1_n2: steady_env_steps_per_s: stored 999.0")


def test_corrupted_event_file_fails_recomputation(root):
    events = next((root / "runs" / "p_r1_n1" / "tb" / "rank0").glob("events.out.tfevents.*"))
    events.write_bytes(events.read_bytes()[:-4])
    result = verify(root)
    assert any(c.startswith(str(events.relative_to(root))) for c in result.changed)
    assert any("p_r1_n1: cannot recompute" in m and events.name in m for m in result.metrics)


def test_cli_exit_status_and_json(root, tmp_path, sacscale_main):
    cmd = ["verify", str(root), "--output", str(tmp_path / "verify.json")]
    ok = sacscale_main(*cmd)
    assert ok.returncode == 0, ok.stderr
    assert json.loads((tmp_path / "verify.json").read_text())["ok"] is True
    (root / "runs" / "p_r1_n1" / "train.log").write_text("edited\n")
    bad = sacscale_main(*cmd)
    assert bad.returncode == 1
    assert "changed: runs/p_r1_n1/train.log" in bad.stderr


def test_missing_manifest_is_named(tmp_path, sacscale_main):
    (tmp_path / "S" / "runs").mkdir(parents=True)  # a set being made, before its manifest
    proc = sacscale_main("verify", tmp_path / "S")
    assert proc.returncode == 1 and "MANIFEST.sha256: manifest is missing" in proc.stderr


@pytest.mark.parametrize("spelled", ["runs//p_r1_n1/train.log", "runs/./p_r1_n1/train.log", "./summary.csv",
                                     "runs/p_r1_n1/../p_r1_n1/train.log", "/summary.csv"])
def test_a_manifest_line_naming_a_file_another_way_is_named_as_such(root, spelled):
    # a file listed a second time as `eval//x.json` failed verify as "missing", though it is there
    digest = manifest.sha256_file(root / "summary.csv")
    with (root / "MANIFEST.sha256").open("a") as lines:
        lines.write(f"{digest}  {spelled}\n")
    with pytest.raises(manifest.ManifestError) as err:
        manifest.parse_manifest(root / "MANIFEST.sha256")
    assert str(err.value).endswith(f"{spelled} is not a path as the manifest writes them (relative, without "
                                   "empty, '.' or '..' parts)"), err.value
    with pytest.raises(manifest.ManifestError, match="is not a path as the manifest writes them"):
        verify(root)
