"""`sacscale verify-env`: what it records, and a plan this machine cannot run fails naming the key."""

import json
import os
import subprocess
import sys

import pytest
import yaml

from pipeline_helpers import REPO
from sacscale.runplan import Host, resolve

PRESETS = yaml.safe_load((REPO / "workflow" / "presets.yaml").read_text())


def verify_env(tmp_path, config, *extra):
    plan = resolve(config, PRESETS, Host(cuda_devices=0, cpus=frozenset(os.sched_getaffinity(0))), check_host=False)
    plan_path = tmp_path / "plan.json"
    plan_path.write_text(json.dumps(plan.as_dict()))
    out = tmp_path / "environment.json"
    proc = subprocess.run([sys.executable, "-m", "sacscale.cli", "verify-env", "--output", str(out),
                           "--plan", str(plan_path), *extra], capture_output=True, text=True, timeout=300)
    return proc, json.loads(out.read_text())


def test_records_the_environment(tmp_path):
    proc, env = verify_env(tmp_path, {"preset": "cpu"})
    assert proc.returncode == 0, proc.stderr
    assert env["ok"] is True and env["problems"] == []
    assert env["plan"]["preset"] == "cpu"
    assert env["project"]["repository"] is True and len(env["project"]["commit"]) == 40
    assert isinstance(env["project"]["dirty"], bool)
    for key in ("torch", "mujoco", "snakemake"):
        assert env["versions"][key]
    assert {"cuda", "cudnn", "nccl", "cuda_devices", "gpus"} <= set(env["torch"])
    assert "topo" in env["nvidia"] and env["cpu"]["available_count"] == len(os.sched_getaffinity(0))
    assert "CPU" in (env["cpu"]["layout"] or "CPU")  # lscpu -e output when lscpu exists
    assert set(env["env"]) <= {k for k in os.environ if k.startswith("NCCL_")} | {"CUDA_VISIBLE_DEVICES"}
    assert env["learner"]["module"] == "sacscale.learn.learner"
    assert isinstance(env["learner"]["graph_hooks"], bool)
    if env["learner"]["file"]:
        assert env["learner"]["file"].endswith("learner.py")


def test_more_gpus_than_visible_fails_naming_the_key(tmp_path):
    proc, env = verify_env(tmp_path, {"preset": "h200x2"})
    if env["torch"]["cuda_devices"] >= 2:
        pytest.skip("this machine has 2 GPUs")
    assert proc.returncode == 1
    assert "run_configs.n2_pool.devices (0,1): preset h200x2 needs 2 CUDA device(s)" in proc.stderr
    assert env["ok"] is False


def test_pool_with_absent_cpus_fails_naming_the_key(tmp_path):
    proc, _ = verify_env(tmp_path, {"preset": "cpu", "run_configs": {"n1_cpu": {"cpu_pools": ["4000-4003"]}}})
    assert proc.returncode == 1
    assert "run_configs.n1_cpu.cpu_pools: rank 0 names CPUs 4000-4003 that do not exist here" in proc.stderr


def test_required_command_missing_is_named(tmp_path):
    proc, env = verify_env(tmp_path, {"preset": "cpu"}, "--require-commands", "train,no-such-command")
    assert proc.returncode == 1
    assert "`sacscale no-such-command` is not available" in proc.stderr
