"""A learner whose networks were within the parameter bound but whose batch x width was not:
one 16,384-wide layer at a batch of 262,144 rows (each allowed alone) needed a 16 GiB
activation, and learner-bench and train failed in torch's allocator naming no setting. Now an
update's activations are bounded as the parameters are (sacscale.learner_limits), named with
the batch, the widths and the count by train, planning and learner-bench; and where a run
still runs out of memory (a smaller device, a memory limit), train and learner-bench say so in
one line naming the settings that size it, exit 2. A run that never did an iteration keeps its
train_meta.json, marked failed with the allocator's own words, as every failed run does."""

import json
from dataclasses import fields
from pathlib import Path

import pytest
import torch
import yaml
from test_bad_input import run_cli

from sacscale.checks import InputError, check_learner_values
from sacscale.cli import main
from sacscale.learn.config import SACConfig
from sacscale.learner_limits import MAX_ACTIVATION_VALUES, REFERENCE_NETWORKS, activation_values
from sacscale.pipeline.runplan import Host, PlanError, resolve

REPO = Path(__file__).resolve().parents[2]
WIDE = {"actor_hidden": [16384], "critic_hidden": [16384]}
TOO_MANY = ("an update's activations would hold 13,046,906,880 values (batch rows x every layer's width through the "
            "actor and both critics), more than the 2,147,483,648 a learner may hold (kept in float32 for the "
            "backward pass, they must fit a GPU beside the networks); give a smaller batch or narrower layers")
CPU_ALLOCATOR = ("[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate memory: you tried "
                 "to allocate 17179869184 bytes. Error code 12 (Cannot allocate memory)")
SMALL_NETS = {"actor_hidden": [16], "critic_hidden": [16], "num_atoms": 11}
TRAIN = ["train", "--devices", "cpu", "--num-envs", "4", "--batch-size", "8", "--iterations", "1",
         "--replay-per-env", "16", "--extra", json.dumps({**SMALL_NETS, "learning_starts": 8})]
BENCH = ["learner-bench", "--modes", "eager", "--iters", "1", "--warmup", "0", "--num-envs", "8", "--device", "cpu"]


def test_the_reference_networks_are_the_learners_defaults():
    defaults = {f.name: f.default for f in fields(SACConfig)}
    assert {name: defaults[name] for name in REFERENCE_NETWORKS} == REFERENCE_NETWORKS


def test_the_case_is_named_with_its_batch_and_widths():
    with pytest.raises(InputError) as exc:
        check_learner_values({"batch_size": 262144, **WIDE}, set(WIDE))
    assert str(exc.value) == ("--batch-size 262144 with --extra actor_hidden [16384], --extra critic_hidden [16384] "
                              f"and num_atoms 101: {TOO_MANY}")


def test_the_bound_holds_the_reference_learner_many_times_over():
    reference = {**REFERENCE_NETWORKS, "batch_size": 8192}
    assert activation_values(reference) == 8192 * 4202
    assert 60 * activation_values(reference) < MAX_ACTIVATION_VALUES


def test_train_refuses_it_before_anything_starts(tmp_path, capsys):
    code, err, _ = run_cli(tmp_path, capsys, "--batch-size", "262144", "--replay-per-env", "65536",
                           "--extra", json.dumps({**WIDE, "learning_starts": 1}))
    assert code == 2 and err.strip().startswith("sacscale train: error: --batch-size 262144 with --extra actor_hidden")
    assert err.strip().endswith(TOO_MANY), err


def test_learner_bench_names_its_own_batch_option(capsys):
    code = main([*BENCH, "--batch", "262144", "--extra", json.dumps(WIDE)])
    assert code == 2
    assert capsys.readouterr().err.strip() == (
        "sacscale learner-bench: error: --batch 262144 with --extra actor_hidden [16384], --extra critic_hidden "
        f"[16384] and num_atoms 101: {TOO_MANY}")


def _plan(run_config: dict):
    presets = yaml.safe_load((REPO / "workflow" / "presets.yaml").read_text())
    config = {"preset": "cpu", "run_configs": {"n1_cpu": run_config}}
    return resolve(config, presets, Host(cuda_devices=0, cpus=frozenset(range(2))))


def test_planning_refuses_it_with_the_extra():
    with pytest.raises(PlanError) as exc:
        _plan({"num_envs": 1024, "batch_size": 262144, "overrides": {"replay-per-env": 512, "extra": json.dumps(WIDE)}})
    assert str(exc.value).startswith("run_configs.n1_cpu.overrides.extra: --batch-size 262144 with --extra "
                                     "actor_hidden [16384]")
    assert str(exc.value).endswith(TOO_MANY)


def test_planning_refuses_a_batch_past_it_with_the_reference_networks():
    with pytest.raises(PlanError) as exc:
        _plan({"num_envs": 4096, "batch_size": 1 << 20, "overrides": {"replay-per-env": 512}})
    assert str(exc.value) == (
        "run_configs.n1_cpu.batch_size: batch_size 1048576 with actor_hidden [512, 256, 128], critic_hidden "
        "[768, 384, 192] and num_atoms 101: an update's activations would hold 4,406,116,352 values (batch rows x "
        "every layer's width through the actor and both critics), more than the 2,147,483,648 a learner may hold "
        "(kept in float32 for the backward pass, they must fit a GPU beside the networks); give a smaller batch or "
        "narrower layers")


def test_every_committed_configuration_is_within_it():
    batches = [8192]
    for text in [(REPO / "workflow" / "presets.yaml").read_text(), (REPO / "config.yaml").read_text()]:
        batches += [int(line.split(":")[1]) for line in text.splitlines() if line.strip().startswith("batch_size:")
                    and line.split(":")[1].strip().isdigit()]
    for meta in REPO.glob("results/*/runs/*/train_meta.json"):
        config = json.loads(meta.read_text()).get("config", {})
        assert not {"actor_hidden", "critic_hidden", "num_atoms"} & set(config.get("extra") or {}), meta
        batches.append(config.get("batch_size", 8192))
    assert max(batches) == 16384
    assert activation_values({**REFERENCE_NETWORKS, "batch_size": max(batches)}) <= MAX_ACTIVATION_VALUES


@pytest.mark.parametrize("failure", [RuntimeError(CPU_ALLOCATOR),
                                     torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 16.00 GiB"),
                                     MemoryError()])
def test_train_out_of_memory_is_one_line_naming_the_settings(tmp_path, capsys, monkeypatch, failure):
    def out_of_memory(*args, **kwargs):
        raise failure

    monkeypatch.setattr("sacscale.train.job.run_rank", out_of_memory)
    run = tmp_path / "run"
    code = main([*TRAIN, "--log-dir", str(run)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err == (
        "sacscale train: error: out of memory on cpu: the run needs more than this machine or device holds at "
        "--batch-size 8 with actor_hidden [16], critic_hidden [16], --num-envs 4 and --replay-per-env 16; give "
        "smaller ones (train_meta.json in --log-dir records the failure)"), err
    meta = json.loads((run / "train_meta.json").read_text())  # kept, as every failed run's record is
    assert meta["status"] == "failed" and meta["error"] == f"{type(failure).__name__}: {failure}"


def test_learner_bench_out_of_memory_is_one_line(capsys, monkeypatch):
    def out_of_memory(*args, **kwargs):
        raise RuntimeError(CPU_ALLOCATOR)

    monkeypatch.setattr("sacscale.learn.bench.bench_learner", out_of_memory)
    code = main([*BENCH, "--batch", "8", "--extra", json.dumps(SMALL_NETS)])
    assert code == 2 and capsys.readouterr().err.strip() == (
        "sacscale learner-bench: error: out of memory on --device cpu: the learner needs more than it holds at "
        "--batch 8 with actor_hidden [16], critic_hidden [16] and --num-envs 8; give smaller ones")


def test_a_resume_out_of_memory_names_the_runs_own_settings(tmp_path, capsys, monkeypatch):
    """A resume takes its settings from its checkpoint; the line named the parser's defaults
    (--batch-size 8192, --num-envs 2048, --replay-per-env 512) that the command line held."""
    run = tmp_path / "run"
    assert main([*TRAIN, "--num-envs", "3", "--log-dir", str(run)]) == 0
    capsys.readouterr()

    def out_of_memory(*args, **kwargs):
        raise RuntimeError(CPU_ALLOCATOR)

    monkeypatch.setattr("sacscale.train.job.run_rank", out_of_memory)
    code = main(["train", "--iterations", "2", "--resume", str(run)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.endswith(
        "sacscale train: error: out of memory on cpu: the run needs more than this machine or device holds at "
        "--batch-size 8 with actor_hidden [16], critic_hidden [16], --num-envs 3 and --replay-per-env 16; the run "
        f"{run} was made with them, so resume it on a machine that holds them (train_meta.json in --resume records "
        "the failure)"), err
    meta = json.loads((run / "train_meta.json").read_text())
    assert meta["status"] == "failed" and meta["error"] == f"RuntimeError: {CPU_ALLOCATOR}"
