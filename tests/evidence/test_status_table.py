"""The README's and docs/benchmarks.md's status table is the one generated from the
committed sets, and the generator reports what the records say (not what a document
would like them to say)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sacscale.evidence import status

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("doc", ["README.md", "docs/benchmarks.md"])
def test_document_holds_the_generated_table(doc):
    text = (ROOT / doc).read_text()
    assert status.embedded(text) == status.block(ROOT), (
        f"{doc}: the status table differs from the committed sets; run "
        f"python -m sacscale.evidence.status --write {doc}")


def test_benchmarks_opens_with_the_table():
    text = (ROOT / "docs/benchmarks.md").read_text()
    first_lines = text.split("\n\n")[:3]
    assert any(status.BEGIN in part for part in first_lines)


def test_committed_two_gpu_set_has_no_interval_and_unrun_presets_are_named():
    table = status.render(ROOT)
    assert "| `h200x2` | 2x H200 | 2 | 2 GPUs vs 1 (n2_pool / n1_local) |" in table
    assert "| `h200x1_final5` | 1x H200 | 1 | CPU pools, one GPU (n1_pool15 / n1_pool7) |" in table
    assert "no set measures it with a confidence interval" in table
    assert "`rtx5090x2` (2 GPUs)" in table  # the seed's server: never run


def _fake_root(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "workflow").mkdir(parents=True)
    shutil.copy(ROOT / "workflow/presets.yaml", root / "workflow/presets.yaml")
    shutil.copy(ROOT / "pyproject.toml", root / "pyproject.toml")
    (root / "results" / "bench_only").mkdir(parents=True)  # no environment record
    return root


def _write_set(root: Path, name: str, *, ci, n: int, sha: str, torch: str = "2.13.0", devices: str = "0,1") -> None:
    d = root / "results" / name
    d.mkdir(parents=True)
    gpus = [{"name": "NVIDIA X"}, {"name": "NVIDIA X"}]
    (d / "environment.json").write_text(json.dumps({"versions": {"torch": torch}, "torch": {"gpus": gpus}}))
    (d / "model.json").write_text(json.dumps({"sha256": sha}))
    (d / "verify.json").write_text(json.dumps({"ok": False}))
    (d / "plan.json").write_text(json.dumps({
        "preset": "rtx5090x2", "iterations": 1000,
        "run_configs": {"a": {"devices": "0"}, "b": {"devices": devices}}}))
    comp = {"baseline": "a", "compared": "b", "ratio_of_means": 2.1, "rank_multiple": 2.0,
            "ratio_ci95": ci, "ci_repeats": n}
    (d / "summary.json").write_text(json.dumps({"configs": {"a": {"n": n}, "b": {"n": n}},
                                                "comparisons": [comp]}))


def test_generated_from_the_records(tmp_path):
    root = _fake_root(tmp_path)
    pinned = status.conforming_sha256(root)
    _write_set(root, "two", ci=[1.9, 2.3], n=5, sha=pinned)
    _write_set(root, "short", ci=[2.0, 2.2], n=2, sha="ab" * 32, torch="2.11.0")
    _write_set(root, "shared", ci=[1.5, 1.7], n=3, sha=pinned, devices="0,0")  # two ranks on one GPU
    table = status.render(root)
    assert ("| `two` | 2x X | 2 | 2 GPUs vs 1 (b / a) | conforming | 2.13.0 | 1000 | 5 | 2.100x | 1.900 .. 2.300 "
            "| fails |") in table
    # two paired repeats: the recorded interval is not shown
    assert ("| `short` | 2x X | 2 | 2 GPUs vs 1 (b / a) | earlier (abababab) | 2.11.0 | 1000 | 2 | 2.100x "
            "| none (n = 2) |") in table
    assert "a set with an interval: `two`" in table
    # two ranks sharing a GPU: not a GPU-scaling figure
    assert "| `shared` | 2x X | 1 | 2 ranks vs 1 on one GPU (b / a) |" in table
    assert "`shared` (" not in table.split("More GPUs against one")[1].split("\n")[0]
    assert "`rtx5090x2`" not in table.split("never run:")[1].split("\n")[0]  # it has a set here
    assert "`bench_only`" in table
    assert "2.11.0, 2.13.0" in table


def test_write_and_check(tmp_path, capsys):
    root = _fake_root(tmp_path)
    doc = tmp_path / "doc.md"
    doc.write_text(f"# t\n\n{status.BEGIN}\nold\n{status.END}\n\nrest\n")
    assert status.main(["--root", str(root), "--check", str(doc)]) == 1
    assert "--write" in capsys.readouterr().err
    assert status.main(["--root", str(root), "--write", str(doc)]) == 0
    assert status.main(["--root", str(root), "--check", str(doc)]) == 0
    assert doc.read_text().endswith(f"{status.END}\n\nrest\n")


def test_outside_the_repository_is_a_usage_error(tmp_path):
    with pytest.raises(SystemExit) as exc:
        status.main(["--root", str(tmp_path)])
    assert exc.value.code == 2
