"""profiles/slurm, for real: the CPU preset end to end through Snakemake's SLURM executor
plugin on a single-node SLURM cluster that the test starts on this machine (cluster.py:
munged, slurmctld, slurmd; partition `gpu` as in the profile). Also the profile's dry runs
and its refusals (no GPU node named, `preset: auto` on the planning host).

Without SLURM (the Debian packages slurmctld, slurmd, munge, slurm-client) or the plugin
(pip install -e .[slurm]) these tests are skipped with the reason; with
SACSCALE_REQUIRE_SLURM=1 (as `.ci/run` sets it) they fail instead."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent / "workflow")]

from cluster import NODE, PARTITION, Cluster, missing_tools  # noqa: E402
from pipeline_helpers import check_run_set, copy_workflow, snakemake  # noqa: E402

# The rules the profile sends to the GPU node; every other rule must stay local.
ON_SLURM = {"verify_env", "prepare_model", "probe_correctness", "train_run", "evaluate_run"}
LOCAL = {"plan", "analyze_run", "aggregate", "manifest", "verify_evidence", "report", "all"}
INSTALL_HINT = "apt-get install slurmctld slurmd munge slurm-client; pip install -e .[slurm]"


def _unavailable(reason: str):
    """Skip, or fail where SLURM is required (CI sets SACSCALE_REQUIRE_SLURM=1, so a broken
    install cannot pass as a green run with this test skipped)."""
    if os.environ.get("SACSCALE_REQUIRE_SLURM") == "1":
        pytest.fail(f"SACSCALE_REQUIRE_SLURM=1 but {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="module")
def plugin():
    if importlib.util.find_spec("snakemake_executor_plugin_slurm") is None:
        _unavailable(f"the SLURM executor plugin is not installed (pip install -e .[slurm]); {INSTALL_HINT}")


@pytest.fixture
def cluster(plugin):
    missing = missing_tools()
    if missing:
        _unavailable(f"SLURM is not installed ({', '.join(missing)} not found); to run this test: {INSTALL_HINT}")
    if os.geteuid() != 0:
        _unavailable("the single-node cluster runs slurmd, which starts jobs, as root; run as root")
    # a short path: munged's socket lives here (Unix socket paths are limited to 107 bytes)
    root = Path(tempfile.mkdtemp(prefix="sacscale-slurm-"))
    c = Cluster(root)
    try:
        c.start()
    except (RuntimeError, OSError) as exc:
        c.stop()
        pytest.fail(f"the single-node SLURM cluster did not start: {exc}", pytrace=False)
    yield c
    c.stop()
    shutil.rmtree(root, ignore_errors=True)


def _env(extra: dict | None = None) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "CUDA_VISIBLE_DEVICES"}
    env.update(extra or {})
    env["CUDA_VISIBLE_DEVICES"] = ""  # the CPU preset, even on a GPU machine
    # the jobs on the node call `sacscale` like the local rules do: this interpreter's
    # environment first on PATH, as when it is activated
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


def _rule(job: dict) -> str:
    """The rule of a job the plugin submitted (its comment: rule_NAME[_wildcards_...])."""
    m = re.fullmatch(r"rule_(.+?)(_wildcards_.*)?", job.get("Comment", ""))
    assert m, f"job {job.get('JobId')} has no rule comment: {job.get('Comment')!r}"
    return m.group(1)


def test_dry_run_plans_gpu_rules_for_the_node(plugin, tmp_path):
    wf = copy_workflow(tmp_path / "wf")
    # --quiet host: the job counts, which the workflow profile's quiet terminal leaves out
    proc = snakemake(wf, "--profile", "profiles/slurm", "-n", "--quiet", "host", "--config", "preset=h200x2",
                     "slurm_node=node07", env=_env(), timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    # the profile's config file survives --config on the command line: no host checks here
    assert "sacscale: preset h200x2 (named in the config)" in out
    # every GPU-node rule is planned (the rules' messages hide their resources in a dry run:
    # the node each job ran on is checked on the real cluster, test_cpu_preset_through_slurm)
    stats = out.split("Job stats:")[1].split("Reasons:")[0]
    assert all(re.search(rf"^{rule}\s+\d+$", stats, re.M) for rule in ON_SLURM), stats


@pytest.mark.parametrize("config, message", [
    (["preset=h200x2"], "slurm_node: name the GPU node that every GPU job runs on: --config slurm_node=NAME"),
    (["slurm_node=node07"], "preset: auto chooses from the GPUs of the machine that plans"),
])
def test_the_profile_refuses_what_would_describe_the_wrong_machine(plugin, tmp_path, config, message):
    wf = copy_workflow(tmp_path / "wf")
    proc = snakemake(wf, "--profile", "profiles/slurm", "-n", "--config", *config, env=_env(), timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert message in out, out[-3000:]
    assert not (wf / "results").exists()


@pytest.mark.slow
@pytest.mark.timeout(2400)  # the pipeline may take its own limit (1800 s) and the cluster's start
def test_cpu_preset_through_slurm(cluster, tmp_path):
    wf = copy_workflow(tmp_path / "wf")
    # the plugin's first status check after 2 s (40 by default; a real cluster's jobs are long)
    # one repeat (2 runs, one per configuration): the same rules reach SLURM in fewer jobs
    # (test_pipeline_e2e runs the same repeat locally)
    proc = snakemake(wf, "--profile", "profiles/slurm", "--config", "preset=cpu", "repeats=1", f"slurm_node={NODE}",
                     "--slurm-init-seconds-before-status-checks", "2", env=_env(cluster.env), timeout=1800)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-6000:] + "\n" + cluster.tail("slurmctld")

    results = wf / "results" / "cpu"
    plan = json.loads((results / "plan.json").read_text())
    names = [r["name"] for r in plan["runs"]]
    check_run_set(wf, "cpu", names)  # every artefact present, verify passed

    # The GPU-node rules ran as SLURM jobs, each once per job of the DAG, all completed, all
    # on the named node, in the profile's partition, with the GPU request of the profile.
    jobs = cluster.jobs()
    by_rule = Counter(_rule(j) for j in jobs)
    assert by_rule == {"verify_env": 1, "prepare_model": 1, "probe_correctness": 1,
                       "train_run": len(names), "evaluate_run": len(names)}, by_rule
    for job in jobs:
        where = f"job {job['JobId']} ({_rule(job)})"
        assert job["JobState"] == "COMPLETED", where
        assert job["ReqNodeList"] == NODE and job["NodeList"] == NODE, where
        assert job["Partition"] == PARTITION, where
        if _rule(job) in ("verify_env", "probe_correctness", "train_run"):
            assert "gpu:2" in job.get("TresPerNode", ""), where
    # Those are all the jobs Snakemake submitted; the local rules, whose outputs exist
    # (check_run_set), were never submitted: they ran here.
    assert set(re.findall(r"has been submitted with SLURM jobid (\d+)", out)) == {j["JobId"] for j in jobs}
    assert not LOCAL & set(by_rule)

    # The environment was recorded on the runs' node, by the verify_env job; each run's record
    # names its own train_run job on that node.
    job_ids = {r: {j["JobId"] for j in jobs if _rule(j) == r} for r in ON_SLURM}
    env_host = json.loads((results / "environment.json").read_text())["host"]
    assert env_host["slurm"]["SLURMD_NODENAME"] == NODE
    assert {env_host["slurm"]["SLURM_JOB_ID"]} == job_ids["verify_env"]
    run_jobs = set()
    for name in names:
        host = json.loads((results / "runs" / name / "run.json").read_text())["host"]
        assert host["name"] == env_host["name"] and host["slurm"]["SLURMD_NODENAME"] == NODE, name
        run_jobs.add(host["slurm"]["SLURM_JOB_ID"])
    assert run_jobs == job_ids["train_run"]

    # verify names a run recorded on another node than the environment
    record = results / "runs" / names[0] / "run.json"
    data = json.loads(record.read_text())
    data["host"]["slurm"]["SLURMD_NODENAME"] = "another-node"
    record.write_text(json.dumps(data))
    bad = subprocess.run([sys.executable, "-m", "sacscale.cli", "verify", str(results)], capture_output=True,
                         text=True, timeout=300)
    assert bad.returncode != 0
    assert (f"{names[0]}: host: environment.json was recorded on host {env_host['name']!r} (SLURM node {NODE!r}), "
            f"the run ran on host {env_host['name']!r} (SLURM node 'another-node')") in bad.stdout + bad.stderr


def test_planning_for_another_machine_refuses_choices_made_from_this_one():
    import yaml

    from sacscale.pipeline.runplan import Host, PlanError, resolve

    presets = yaml.safe_load((HERE.parents[1] / "workflow" / "presets.yaml").read_text())
    here = Host(cuda_devices=0, cpus=frozenset(os.sched_getaffinity(0)))
    with pytest.raises(PlanError, match="preset: auto chooses from the GPUs of the machine that plans"):
        resolve({"preset": "auto"}, presets, here, check_host=False)
    with pytest.raises(PlanError, match=r"preset: planned plans from the topology .* planner: \{matrix: FILE\}"):
        resolve({"preset": "planned"}, presets, here, check_host=False, matrix=lambda: pytest.fail("planned here"))
    assert resolve({"preset": "h200x2"}, presets, here, check_host=False).preset == "h200x2"


def test_the_multinode_template_trains_through_srun_and_torchrun(cluster, tmp_path):
    """templates/slurm/train-multinode.sbatch, submitted as it is (one node of the test
    cluster, its two GPU slots): srun starts the torchrun agent, which starts two ranks of
    `sacscale train`, here gloo ranks on CPU (DEVICES=cpu,cpu); they end bit-identical."""
    from sacscale.task.g1_model import build_g1_model, save_model

    model = tmp_path / "g1_walk_flat.mjb"
    save_model(build_g1_model(), model)
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # the test node's name does not resolve: its rendezvous address is given, as on a
    # cluster whose node names are not the hosts' network names
    env = _env({**cluster.env, "DEVICES": "cpu,cpu", "GPUS_PER_NODE": "2", "LOG_DIR": str(tmp_path / "run"),
                "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port)})
    template = Path(__file__).resolve().parents[2] / "templates" / "slurm" / "train-multinode.sbatch"
    flags = ["--num-envs", "8", "--batch-size", "32", "--num-critic-updates", "1", "--num-actor-updates", "1",
             "--iterations", "12", "--replay-per-env", "16", "--log-every", "2", "--timeout-s", "120",
             "--sim-threads", "1", "--model", str(model),
             "--extra", '{"learning_starts": 64, "actor_hidden": [32], "critic_hidden": [32], "num_atoms": 11}']
    out = tmp_path / "job.out"
    proc = subprocess.run(["sbatch", "--wait", "--nodes=1", f"--output={out}", f"--chdir={tmp_path}",
                           str(template), *flags], capture_output=True, text=True, env=env, timeout=600)
    log = out.read_text() if out.exists() else ""
    assert proc.returncode == 0, proc.stdout + proc.stderr + log[-4000:] + cluster.tail("slurmctld")
    assert "sacscale: 1 node(s) x 2 rank(s), devices cpu,cpu" in log
    meta = json.loads((tmp_path / "run" / "train_meta.json").read_text())
    assert meta["status"] == "completed" and meta["world_size"] == 2 and meta["ranks_identical"] is True
    (job,) = [j for j in cluster.jobs() if j.get("JobName") == "sacscale-train"]
    assert job["JobState"] == "COMPLETED" and job["NodeList"] == NODE and "gpu:2" in job.get("TresPerNode", "")

