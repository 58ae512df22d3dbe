"""A set that stopped before training (a GPU preset on a CPU machine stops at verify_env,
leaving its plan and logs) is refused under a corrected plan, as any set of another plan is,
but the refusal says it holds nothing trained and names the folders whose removal lets the
same name be used again; nothing is removed for the user. A set that holds any work
(a run, an attempt set aside, a probe record or log, a report) keeps the usual refusal."""

import os
import re
import shutil

import pytest
from pipeline_helpers import copy_workflow, snakemake

from sacscale.evidence.runset import RunSetError, decide, inspect

PLAN = {"run_set": "g1", "preset": "cpu"}


def test_a_gpu_preset_stopped_on_a_cpu_machine_can_be_remade_under_its_name(tmp_path):
    wf = copy_workflow(tmp_path / "wf")
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}  # no GPU even where the test machine has one
    first = snakemake(wf, "--cores", "2", "--config", "preset=h200x1", "host_checks=False", "run_set=g1", env=env)
    assert first.returncode != 0 and not (wf / "results" / "g1" / "runs").exists(), first.stderr[-3000:]
    before = sorted(str(p.relative_to(wf)) for p in wf.rglob("*") if p.parts[len(wf.parts)] != ".snakemake")

    again = snakemake(wf, "-n", "--cores", "2", "--config", "run_set=g1", env=env)
    out = again.stdout + again.stderr
    assert again.returncode != 0
    assert "run set 'g1': results/g1/ was made with a different plan (plan.json differs in " in out
    assert "but holds nothing trained" in out
    assert "remove its folders yourself (nothing is removed for you): rm -r results/g1 logs/g1 benchmarks/g1;" in out
    assert "--config run_set=g1_new" in out and "sacscale verify" not in out
    after = sorted(str(p.relative_to(wf)) for p in wf.rglob("*") if p.parts[len(wf.parts)] != ".snakemake")
    assert after == before  # nothing removed or made

    for folder in re.search(r"rm -r ([^;]+);", out).group(1).split():
        shutil.rmtree(wf / folder)
    fresh = snakemake(wf, "-n", "--cores", "2", "--config", "run_set=g1", env=env)
    assert fresh.returncode == 0 and "train_run" in fresh.stdout + fresh.stderr, fresh.stderr[-3000:]


def _set(tmp_path, *files):
    for rel in ("results/g1/plan.json", "logs/g1/plan.log", "logs/g1/verify_env.log", *files):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text('{"run_set": "g1", "preset": "h200x1"}' if rel.endswith("plan.json") else "x")
    return inspect("g1", tmp_path, PLAN, ["results/g1/summary.json"])


def _refusal(state):
    with pytest.raises(RunSetError) as err:
        decide(state, set())
    return str(err.value)


def test_records_made_before_training_are_nothing_trained(tmp_path):
    (tmp_path / "reports" / "g1").mkdir(parents=True)  # made empty with the set's folders
    state = _set(tmp_path, "results/g1/environment.json", "results/g1/source.diff", "results/g1/model.json",
                 "results/g1/model/g1_walk_flat.mjb", "benchmarks/g1/plan.tsv", "benchmarks/g1/verify/T.tsv")
    assert "rm -r results/g1 logs/g1 benchmarks/g1 reports/g1;" in _refusal(state)


@pytest.mark.parametrize("work", [
    "results/g1/runs/cpu_r1_n1_cpu/run.json",
    "results/g1/runs/.cpu_r1_n1_cpu.partial/train.log",
    "results/g1/correctness.json",
    "logs/g1/probe_correctness.log",
    "logs/g1/attempts/cpu_r1_n1_cpu.failed-20261207T000000Z/train.log",
    "logs/g1/train/cpu_r1_n1_cpu.log",
    "reports/g1/report.md",
    "results/g1/notes.txt",
])
def test_a_set_holding_any_work_keeps_the_usual_refusal(tmp_path, work):
    message = _refusal(_set(tmp_path, work))
    assert "different plan" in message and "nothing trained" not in message and "rm -r" not in message


def test_a_linked_file_is_not_taken_for_a_record_before_training(tmp_path):
    assert "nothing trained" in _refusal(_set(tmp_path))
    (tmp_path / "results" / "g1" / "environment.json").symlink_to(tmp_path / "results" / "g1" / "plan.json")
    assert "nothing trained" not in _refusal(inspect("g1", tmp_path, PLAN, []))
