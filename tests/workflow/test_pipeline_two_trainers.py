"""The reference trainer and ours through one pipeline (stand-in trainers: the reference
one writes the reference's own layout and tags): a counterbalanced pair on one GPU, the
reference's environment recorded, both runs' metrics by the same definition, the report's
side-by-side table, and verify over a run set that holds both trainers' runs."""

import json
import os
import stat
import sys

import pytest
import yaml
from pipeline_helpers import snakemake

pytestmark = pytest.mark.slow

CONFIG = {
    "preset": "h200x1", "run_set": "pair", "host_checks": False, "repeats": 2, "iterations": 10,
    "order": ["ref_n1", "ours_n1"], "pairs": [["ref_n1", "ours_n1"]],
    "run_configs": {
        "ref_n1": {"trainer": "unilab", "devices": "0", "cpu_pools": ["1"], "trace": False, "num_envs": 16,
                   "log_every": 1, "overrides": {"algo.updates_per_step": 8}},
        "ours_n1": {"devices": "0", "cpu_pools": ["1"], "trace": True, "num_envs": 16, "log_every": 1,
                    "batch_size": 64},
    },
    "reference": {"python": "reference-env/bin/python"},
    "model": {"expect_sha256": None},  # the stand-in's model is not the task's
}


@pytest.fixture
def fake_gpu_env(tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    exe = bindir / "sacscale"
    exe.write_text(f"#!{sys.executable}\n" + open(os.path.dirname(__file__) + "/fake_sacscale.py").read())
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    path = f"{bindir}{os.pathsep}{os.path.dirname(sys.executable)}{os.pathsep}{os.environ['PATH']}"
    return {**os.environ, "PATH": path, "FAKE_CUDA_DEVICES": "1"}


def test_both_trainers_in_one_run_set(workflow_dir, fake_gpu_env):
    (workflow_dir / "pair.yaml").write_text(yaml.safe_dump(CONFIG))
    proc = snakemake(workflow_dir, "--cores", "2", "--configfile", "pair.yaml", env=fake_gpu_env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    results = workflow_dir / "results" / "pair"
    runs = ["h200_r1_ref_n1", "h200_r1_ours_n1", "h200_r2_ours_n1", "h200_r2_ref_n1"]
    for name in runs:
        record = json.loads((results / "runs" / name / "run.json").read_text())
        reference = name.endswith("ref_n1")
        assert record["status"] == "completed"
        assert record["command"][:2] == ["sacscale", "train-reference" if reference else "train"]
        if reference:
            assert "algo.updates_per_step=8" in record["command"] and "--model" not in record["command"]
            assert record["env_set"]["SACSCALE_REFERENCE_PYTHON"] == "reference-env/bin/python"
        metrics = json.loads((results / "metrics" / f"{name}.json").read_text())
        assert metrics["steady_env_steps_per_s"] > 0 and metrics["config"] == name.split("_", 2)[2]
        assert (results / "eval" / f"{name}.json").is_file() != reference  # our checkpoints only
    assert json.loads((results / "reference_env.json").read_text())["python"] == "reference-env/bin/python"
    assert "reference_env.json" in (results / "MANIFEST.sha256").read_text()
    summary = json.loads((results / "summary.json").read_text())
    (pair,) = summary["comparisons"]
    assert (pair["baseline"], pair["compared"]) == ("ref_n1", "ours_n1") and pair["ratio_of_means"] > 0
    md = (workflow_dir / "reports" / "pair" / "report.md").read_text()
    side = md.split("### The trainers side by side")[1]
    assert "| ref_n1 | unilab |" in side and "| ours_n1 | sacscale |" in side
    # physics share and end-of-run tracking, each trainer's from its own tags (the stand-ins'
    # values: 50 of 200 ms (25%) and 0.7/0.3 of the maxima; 80 of 100 ms and 0.6/0.4)
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]]
            for line in side.splitlines() if line.startswith(("| ref_n1 |", "| ours_n1 |"))}
    assert (rows["ref_n1"][4], rows["ref_n1"][-2:]) == ("25%", ["0.70", "0.30"])
    assert (rows["ours_n1"][4], rows["ours_n1"][-2:]) == ("80%", ["0.60", "0.40"])
    # runs on a (stand-in) GPU: the report shows the best-evaluated run of ours on video
    choice = json.loads((workflow_dir / "reports" / "pair" / "figures" / "best_run.json").read_text())
    assert choice["run"] in ("h200_r1_ours_n1", "h200_r2_ours_n1") and "_ref_" not in " ".join(choice["scores"])
    assert "### The best run's policy on video" in md and "figures/best_run.webp" in md
    verified = json.loads((results / "verify.json").read_text())
    assert verified["ok"] is True and verified["runs_checked"] == 4
