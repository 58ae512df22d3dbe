"""Run configurations that passed planning and broke later:
an override written `no-compile: true` (a TypeError through Snakemake), two override keys
of one trainer option (the last won without a word), learner CPUs the trainer refuses at
its start, and a comparison listed twice."""

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from sacscale.pipeline.runplan import Host, PlanError, resolve

REPO = Path(__file__).resolve().parents[2]
PRESETS = yaml.safe_load((REPO / "workflow" / "presets.yaml").read_text())
CPU_BOX = Host(cuda_devices=0, cpus=frozenset(range(2)))


def plan(entry: dict, **top):
    return resolve({"preset": "cpu", "run_configs": {"n1_cpu": entry}, **top}, PRESETS, CPU_BOX)


def test_an_override_by_the_no_form_of_a_flag_plans():
    """`no-compile: true` is the trainer's --no-compile: planning ended in `TypeError:
    TrainConfig.__init__() got an unexpected keyword argument 'no_compile'`."""
    resolved = plan({"overrides": {"no-compile": True}})
    assert resolved.run_configs["n1_cpu"].overrides == {"replay-per-env": 64, "no-compile": True}


@pytest.mark.parametrize("overrides, says", [
    ({"learner-cpu-ids": "0", "learner_cpu_ids": "1"},
     r"overrides\.learner_cpu_ids: sets the trainer's --learner-cpu-ids as overrides\.learner-cpu-ids does"),
    ({"compile": True, "no-compile": True}, r"overrides\.no-compile: sets the trainer's --compile as "
                                            r"overrides\.compile does"),
])
def test_two_override_keys_of_one_trainer_option_are_refused(overrides, says):
    with pytest.raises(PlanError, match=r"run_configs\.n1_cpu\." + says):
        plan({"overrides": overrides})


@pytest.mark.parametrize("entry, says", [
    ({"overrides": {"learner-cpu-ids": "0-99999"}}, r"rank 0: '0-99999': CPUs are numbered 0-8191"),
    ({"overrides": {"learner-cpu-ids": "7"}}, r"rank 0 names CPUs 7 that do not exist on this machine"),
    ({"overrides": {"learner-cpu-ids": "x"}}, r"rank 0: 'x' is not a CPU list"),
    ({"overrides": {"learner-cpu-ids": "1,1"}}, r"rank 0: '1,1' names CPU\(s\) 1 twice; name each CPU once"),
    ({"devices": "cpu,cpu", "overrides": {"learner-cpu-ids": "0"}}, r"1 CPU list\(s\) for 2 rank\(s\)"),
    ({"devices": "cpu,cpu", "overrides": {"learner-cpu-ids": "0;0"}}, r"the learners of ranks 0 and 1 share CPUs 0"),
    ({"cpu_pools": "0", "overrides": {"learner-cpu-ids": "0"}}, r"rank 0's learner CPUs 0 are in a collector pool"),
])
def test_learner_cpus_the_trainer_refuses_at_its_start_are_refused_at_planning(entry, says):
    """They passed the plan; the trainer refused them when the run started (exit 2)."""
    with pytest.raises(PlanError, match=r"run_configs\.n1_cpu\.overrides\.learner-cpu-ids: " + says):
        plan(entry)


def test_learner_cpus_outside_the_pools_plan():
    resolved = plan({"cpu_pools": "0", "overrides": {"learner-cpu-ids": "1"}})
    assert resolved.run_configs["n1_cpu"].overrides["learner-cpu-ids"] == "1"


def test_a_comparison_listed_twice_is_refused_and_both_directions_plan():
    with pytest.raises(PlanError, match=r"pairs\[1\]: \[n1_cpu, n2_cpu\] is listed twice"):
        resolve({"preset": "cpu", "pairs": [["n1_cpu", "n2_cpu"], ["n1_cpu", "n2_cpu"]]}, PRESETS, CPU_BOX)
    resolve({"preset": "cpu", "pairs": [["n1_cpu", "n2_cpu"], ["n2_cpu", "n1_cpu"]]}, PRESETS, CPU_BOX)


def test_snakemake_names_the_override_in_one_line_not_a_traceback(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text("preset: cpu\nrun_set: t10\nrun_configs:\n  n1_cpu:\n    overrides: {compile: true, "
                      "no-compile: true}\n")
    done = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--configfile", str(config)], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    out = done.stdout + done.stderr
    assert done.returncode != 0 and "Traceback" not in out, out
    assert "overrides.no-compile: sets the trainer's --compile as overrides.compile does" in out, out


BIG_BOX = Host(cuda_devices=8, cpus=frozenset(range(64)))


@pytest.mark.parametrize("config, value, says", [
    ("n1_local", "a,b", r"'a,b': 'a' is not a CUDA device index or a GPU-/MIG- UUID"),
    ("n1_local", "", r"'': '' is not a CUDA device index"),
    ("n1_local", "0,,1", r"'0,,1': '' is not a CUDA device index"),
    ("n2_pool", "4", r"'4' makes 1 device\(s\) visible; devices name 2"),
])
def test_visible_devices_cuda_cannot_read_or_too_few_are_refused_at_planning(config, value, says):
    """CUDA_VISIBLE_DEVICES=a,b hides every GPU: the plan passed and the run failed at its
    start (`needs 1 visible CUDA device(s), but 0 are visible`)."""
    with pytest.raises(PlanError, match=rf"run_configs\.{config}\.cuda_visible_devices: " + says):
        resolve({"preset": "h200x2", "run_configs": {config: {"cuda_visible_devices": value}}}, PRESETS, BIG_BOX)


@pytest.mark.parametrize("value", ["4,5", "GPU-8f2a1c3e-1111-2222-3333-444455556666,MIG-GPU-8f2a/1/0"])
def test_visible_devices_by_index_or_uuid_plan(value):
    resolve({"preset": "h200x2", "run_configs": {"n2_pool": {"cuda_visible_devices": value}}}, PRESETS, BIG_BOX)


@pytest.mark.parametrize("name", ["TORCHDYNAMO_DISABLE", "TORCH_COMPILE_DISABLE"])
def test_a_run_env_that_turns_compile_off_behind_the_record_is_refused(name):
    """torch.compile became a no-op while train_meta.json said compile: true."""
    with pytest.raises(PlanError, match=rf"run_defaults\.env: {name} turns torch\.compile off behind the run's "
                                        r"record .* use overrides: \{compile: false\}"):
        resolve({"preset": "cpu", "run_defaults": {"env": {name: "1"}}}, PRESETS, CPU_BOX)
    resolve({"preset": "cpu", "run_defaults": {"env": {name: "0"}}}, PRESETS, CPU_BOX)
