"""A run's command line is held at planning to what the kernel starts a program with, and the
run set to a bounded number of runs. Run env values each under the 4,096-character bound but
together 136 KB planned, and every training run then failed with `Argument list too long`
(exit 126) after the jobs before it; 64 configurations x 1000 repeats planned 64,000 runs
without a word, and Snakemake built their DAG for minutes."""

import os
import subprocess
from pathlib import Path

import pytest
import yaml

from pipeline_helpers import snakemake
from sacscale.pipeline import command_size
from sacscale.pipeline.runplan import Host, PlanError, resolve
from sacscale.trainers.unilab import REFERENCE_G1_MESHES

ROOT = Path(__file__).resolve().parents[2]
PRESETS = yaml.safe_load((ROOT / "workflow" / "presets.yaml").read_text())
CPU_BOX = Host(cuda_devices=0, cpus=frozenset(range(2)))


def plan(config):
    return resolve({"preset": "cpu", **config}, PRESETS, CPU_BOX)


def many_values(count, size=4000):
    return {f"P_{i}": "x" * size for i in range(count)}


def test_env_values_together_over_one_word_s_bound_are_refused():
    with pytest.raises(PlanError) as refused:
        plan({"repeats": 1, "run_defaults": {"env": many_values(34)}})
    assert str(refused.value).startswith(
        "run_configs.n1_cpu.env (preset cpu): 34 value(s) of 136,000 characters together make run cpu_r1_n1_cpu's "
        "shell command ")
    assert "over the 126,976 one word may have (the kernel's 131,072 less a margin): the run would fail with " \
           "`Argument list too long`; shorten the values or set fewer" in str(refused.value)


def test_values_whose_words_fit_but_whose_shell_command_does_not_are_refused():
    # 72,000 characters: each word of record-run's fits, but bash gets the rule's whole
    # command, the values twice (--resolved-json and --env), as one word of 145 KB
    with pytest.raises(PlanError) as refused:
        plan({"repeats": 1, "run_defaults": {"env": many_values(18)}})
    assert str(refused.value).startswith(
        "run_configs.n1_cpu.env (preset cpu): 18 value(s) of 72,000 characters together make run cpu_r1_n1_cpu's "
        "shell command 145,400 bytes (the run rule hands bash its whole command as one word, and the values are in "
        "it twice: in --resolved-json and in the --env words), over the 126,976 one word may have")


def test_a_config_s_own_run_configuration_is_named():
    with pytest.raises(PlanError, match=r"^run_configs\.n2_cpu\.env: 34 value\(s\) "):
        plan({"run_configs": {"n2_cpu": {"env": many_values(34)}}})


def test_values_that_fit_one_word_plan_and_start():
    the_plan = plan({"repeats": 1, "run_defaults": {"env": many_values(15)}})
    assert len(the_plan.runs) == 2
    line = command_size.shell_line(the_plan, the_plan.runs[0])
    # as Snakemake starts it: bash -c 'set -euo pipefail; <the command>', one word
    subprocess.run(["/bin/true", f"set -euo pipefail; {line}"], check=True)


def test_the_checked_command_is_the_one_the_rule_renders(workflow_dir):
    values = {"A": "it's \"q\" $HOME", "B": "x y"}
    (workflow_dir / "env.yaml").write_text(yaml.safe_dump({"repeats": 1, "run_defaults": {"env": values}}))
    proc = snakemake(workflow_dir, "-n", "-p", "--cores", "1", "--configfile", "env.yaml")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    shown = [line.removeprefix("Shell command: ") for line in proc.stdout.splitlines()
             if line.startswith("Shell command: sacscale record-run")]
    the_plan = plan({"repeats": 1, "run_defaults": {"env": values}})
    assert shown == [command_size.shell_line(the_plan, run) for run in the_plan.runs]


def test_a_command_line_and_environment_over_arg_max_are_refused(monkeypatch):
    the_plan = plan({"repeats": 1, "run_defaults": {"env": many_values(4)}})
    monkeypatch.setattr(command_size, "arg_max", lambda: command_size.TOTAL_MARGIN + 40_000)  # a small stack
    with pytest.raises(PlanError) as refused:
        command_size.check_run_commands(the_plan, {"n1_cpu": "cpu", "n2_cpu": "cpu"}, {"HOME": "/root"})
    assert str(refused.value).startswith("run_configs.n1_cpu.env (preset cpu): 4 value(s) of 16,000 characters "
                                         "together make run cpu_r1_n1_cpu's command line and environment ")
    assert "(ARG_MAX 105,536 less a margin, this process's environment included)" in str(refused.value)
    assert str(refused.value).endswith("; shorten the values or set fewer")


def test_an_inherited_environment_over_arg_max_is_named_as_the_cause():
    the_plan = plan({"repeats": 1})  # no env of its own
    crowded = many_values(os.sysconf("SC_ARG_MAX") // 100_000 + 1, 100_000)  # this process's environment
    with pytest.raises(PlanError) as refused:
        command_size.check_run_commands(the_plan, {"n1_cpu": "cpu", "n2_cpu": "cpu"}, crowded)
    assert str(refused.value).startswith(f"the environment this pipeline was started with ({len(crowded)} "
                                         "variable(s), ")
    assert ", which every job inherits) and run cpu_r1_n1_cpu's command line (" in str(refused.value)
    assert "(ARG_MAX" in str(refused.value) and "this process's environment included" in str(refused.value)
    assert str(refused.value).endswith("; unset or shorten its largest variables (P_0, P_1, P_2) before starting "
                                       "the pipeline")
    command_size.check_run_commands(the_plan, {}, {})


def test_more_runs_than_a_set_holds_are_refused():
    configs = {f"c{i}": {"devices": "cpu", "num_envs": 16 + i} for i in range(64)}
    with pytest.raises(PlanError) as refused:
        plan({"repeats": 1000, "order": list(configs), "run_configs": configs})
    assert str(refused.value) == ("repeats 1000 x order of 64 run configurations (c0, c1, c2, ... c63): 64,000 runs; "
                                  "a run set holds at most 1,000: plan fewer repeats or configurations, or split "
                                  "them into several run sets")


def test_a_preset_s_order_is_named_as_the_preset_s():
    with pytest.raises(PlanError, match=r"^repeats 501 x order \(preset cpu\) of 2 run configurations "
                                        r"\(n1_cpu, n2_cpu\): 1,002 runs; "):
        plan({"repeats": 501})


def test_a_set_of_the_largest_size_plans():
    assert len(plan({"repeats": 500}).runs) == 1000


def test_the_dry_run_stops_on_values_too_long_together(workflow_dir):
    (workflow_dir / "big.yaml").write_text(yaml.safe_dump({"repeats": 1, "run_defaults": {"env": many_values(34)}}))
    proc = snakemake(workflow_dir, "-n", "--cores", "1", "--configfile", "big.yaml")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "config error: run_configs.n1_cpu.env (preset cpu): 34 value(s) of 136,000 characters together " in out
    assert "Traceback" not in out and not (workflow_dir / "results" / "cpu").exists()


QUOTES = "'" * 4000  # a shell-quoted ' takes 5 bytes


def reference_plan(tmp_path, reference, env_values=3):
    config = {"preset": "h200x1_ref", "host_checks": False, "repeats": 1, "order": ["ref_n1"], "pairs": [],
              "run_configs": {"ref_n1": {"env": {f"P_{i}": QUOTES for i in range(env_values)}}},
              "reference": reference}
    return resolve(config, PRESETS, CPU_BOX, check_host=False)


def test_a_reference_run_s_interpreter_is_counted_in_its_command(tmp_path):
    # the rule adds --env SACSCALE_REFERENCE_PYTHON=... to a reference run's command; a
    # command of 141 KB planned, uncounted, and the run would fail `Argument list too long`
    python = str(tmp_path) + "/" + (QUOTES[:190] + "/") * 20 + "python"  # not there yet: reference-env makes it
    reference_plan(tmp_path, {"python": "x" * len(python)})  # the same length without quotes fits
    with pytest.raises(PlanError) as refused:
        reference_plan(tmp_path, {"python": python})
    assert str(refused.value).startswith(
        "run_configs.ref_n1.env with reference.python: 5 value(s) of ")
    assert "over the 126,976 one word may have" in str(refused.value)


def test_a_reference_run_s_meshes_are_counted_in_its_command(tmp_path):
    the_plan = reference_plan(tmp_path, {})
    reference = {"meshes": "/m/" + QUOTES}
    assert len(command_size.shell_line(the_plan, the_plan.runs[0])) < 126_976
    assert len(command_size.shell_line(the_plan, the_plan.runs[0], reference)) > 131_072
    with pytest.raises(PlanError, match=r"^run_configs\.ref_n1\.env \(preset h200x1_ref\) with reference\.python "
                                        r"and reference\.meshes: 6 value\(s\) of "):
        command_size.check_run_commands(the_plan, {"ref_n1": "h200x1_ref"}, {}, reference)


def test_a_reference_run_s_checked_command_is_the_one_the_rule_renders(workflow_dir):
    meshes = workflow_dir / "meshes it's"
    meshes.mkdir()
    for name in REFERENCE_G1_MESHES:
        (meshes / name).write_bytes(b"solid\n")
    reference = {"python": "ref env/bin/python", "meshes": str(meshes)}
    config = {"preset": "h200x1_ref", "host_checks": False, "repeats": 1, "order": ["ref_n1"], "pairs": [],
              "reference": reference}
    (workflow_dir / "ref.yaml").write_text(yaml.safe_dump(config))
    proc = snakemake(workflow_dir, "-n", "-p", "--cores", "1", "--configfile", "ref.yaml")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    shown = [line.removeprefix("Shell command: ") for line in proc.stdout.splitlines()
             if line.startswith("Shell command: sacscale record-run")]
    the_plan = resolve(config, PRESETS, CPU_BOX, check_host=False)
    assert "--env 'SACSCALE_REFERENCE_MESHES=" in shown[0]
    assert shown == [command_size.shell_line(the_plan, run, reference) for run in the_plan.runs]
