"""End to end: `snakemake --cores all` with the shipped config (CPU preset without CUDA)
and the real trainer, probe and model, in a copy of the workflow; then tampering with
the evidence makes `snakemake verify` fail naming the file. A few minutes on 2 cores.

One repeat (`repeats=1`: one run of each configuration, the preset's probe and
iterations): a second repeat trains the same two configurations again by the same code,
with the next seed, and costs another two runs and evaluations. The counterbalanced
order over repeats and the summary of several repeats are checked on the stand-in
trainer's sets (test_pipeline_fake_trainer.py, test_pipeline_interrupted.py) and by
test_runplan.py.

The pipeline runs once for this module; each test reads what it made (the tampering
test works on a copy). The report's video is on where this machine can render offscreen
(the video test, which needs it, skips or fails naming the library otherwise)."""

import json
import os

import pytest
from pipeline_helpers import check_run_set, check_tampering_is_caught, copy_of, runs_in_order, snakemake

# the first test runs the pipeline for the module (its own limit: 900 s), then checks it
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1500)]


def _env():
    env = {k: v for k, v in os.environ.items() if k != "CUDA_VISIBLE_DEVICES"}
    env["CUDA_VISIBLE_DEVICES"] = ""  # the CPU preset, even on a GPU machine
    return env


@pytest.fixture(scope="module")
def cpu_set(tmp_path_factory, gl_available):
    """(workflow dir, Snakemake's output, whether the video was made): the CPU preset, run once."""
    from pipeline_helpers import copy_workflow

    workflow_dir = copy_workflow(tmp_path_factory.mktemp("e2e") / "wf")
    video = gl_available[0]
    args = ["--cores", "all", "--config", "repeats=1"]
    if video:
        # the report's video is off by default on CPU; on here, tiny (2 frames of 64x48)
        (workflow_dir / "video.yaml").write_text(
            "video: {enabled: true, seconds: 0.2, width: 64, height: 48, fps: 10}\n")
        args += ["--configfile", "video.yaml"]
    proc = snakemake(workflow_dir, *args, timeout=900, env=_env())
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-6000:]
    return workflow_dir, out, video


def test_cpu_preset_end_to_end(cpu_set):
    workflow_dir, out, _ = cpu_set
    assert "sacscale: preset cpu (preset auto: no CUDA device visible" in out

    plan = json.loads((workflow_dir / "results" / "cpu" / "plan.json").read_text())
    names = [r["name"] for r in plan["runs"]]
    assert plan["repeats"] == 1 and [r["config"] for r in plan["runs"]] == ["n1_cpu", "n2_cpu"]
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


def test_cpu_preset_report_shows_the_best_runs_video(cpu_set, gl):
    """The report's video: the best-evaluated run, and why."""
    workflow_dir, _, video = cpu_set
    assert video, "the module's pipeline ran before offscreen rendering was usable here"
    names = [r["name"] for r in json.loads((workflow_dir / "results" / "cpu" / "plan.json").read_text())["runs"]]
    choice = json.loads((workflow_dir / "reports" / "cpu" / "figures" / "best_run.json").read_text())
    assert choice["run"] in names and (workflow_dir / "reports" / "cpu" / "figures" / "best_run.webp").is_file()
    report = (workflow_dir / "reports" / "cpu" / "report.md").read_text()
    assert "### The best run's policy on video" in report and f"`{choice['run']}`" in report


def test_cpu_preset_tampering_is_caught(cpu_set, tmp_path):
    workflow_dir = copy_of(cpu_set[0], tmp_path / "wf")
    names = [r["name"] for r in json.loads((workflow_dir / "results" / "cpu" / "plan.json").read_text())["runs"]]
    check_tampering_is_caught(workflow_dir, "cpu", names[0], env=_env())
