"""End to end: `snakemake --cores all` with the shipped config (CPU preset without CUDA)
and the real trainer, probe and model, in a copy of the workflow; then tampering with
the evidence makes `snakemake verify` fail naming the file. A few minutes on 2 cores."""

import json
import os

import pytest
from pipeline_helpers import check_run_set, check_tampering_is_caught, runs_in_order, snakemake

pytestmark = pytest.mark.slow


def test_cpu_preset_end_to_end(workflow_dir):
    env = {k: v for k, v in os.environ.items() if k != "CUDA_VISIBLE_DEVICES"}
    env["CUDA_VISIBLE_DEVICES"] = ""  # the CPU preset, even on a GPU machine
    # the report's video is off by default on CPU; on here, tiny (2 frames of 64x48)
    (workflow_dir / "video.yaml").write_text("video: {enabled: true, seconds: 0.2, width: 64, height: 48, fps: 10}\n")
    proc = snakemake(workflow_dir, "--cores", "all", "--configfile", "video.yaml", timeout=900, env=env)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-6000:]
    assert "sacscale: preset cpu (preset auto: no CUDA device visible" in out

    plan = json.loads((workflow_dir / "results" / "cpu" / "plan.json").read_text())
    names = [r["name"] for r in plan["runs"]]
    assert [r["config"] for r in plan["runs"]] == ["n1_cpu", "n2_cpu", "n2_cpu", "n1_cpu"][: 2 * plan["repeats"]]
    check_run_set(workflow_dir, "cpu", names)
    records = runs_in_order(workflow_dir / "results" / "cpu", names)
    assert all(r["resolved_config"]["devices"] in ("cpu", "cpu,cpu") for r in records)

    environment = json.loads((workflow_dir / "results" / "cpu" / "environment.json").read_text())
    assert environment["learner"]["graph_hooks"] is True
    assert environment["plan"]["preset"] == "cpu"

    n2 = json.loads((workflow_dir / "results" / "cpu" / "metrics" / f"{names[1]}.json").read_text())
    assert [r["rank"] for r in n2["ranks"]] == [0, 1]
    assert n2["iterations"] == plan["iterations"]

    # a run keeps a policy-only checkpoint; its learning state is in logs/, not evidence
    import torch

    policy = torch.load(workflow_dir / "results" / "cpu" / "runs" / names[0] / "checkpoints" / "final.pt",
                        weights_only=True)
    full = workflow_dir / "logs" / "cpu" / "learning_state" / names[0] / "checkpoints" / "final.pt"
    assert "optimizers" not in policy and "optimizers" in torch.load(full, weights_only=True)
    assert records[0]["learning_state"]["moved_to"].endswith(f"learning_state/{names[0]}")
    # the report's video: the best-evaluated run, and why
    choice = json.loads((workflow_dir / "reports" / "cpu" / "figures" / "best_run.json").read_text())
    assert choice["run"] in names and (workflow_dir / "reports" / "cpu" / "figures" / "best_run.webp").is_file()
    report = (workflow_dir / "reports" / "cpu" / "report.md").read_text()
    assert "### The best run's policy on video" in report and f"`{choice['run']}`" in report

    check_tampering_is_caught(workflow_dir, "cpu", names[0], env=env)
