"""Learner settings that passed every check and broke later. `critic_hidden` of 16 layers of
16,384 passed each size bound and planning, then failed in torch's allocator naming no
setting (a critic of 4.3e9 weights; without a memory limit, the OOM killer): now each network
as a whole is bounded (sacscale.learner_limits), named with its settings and count wherever the
ranges are checked. `"betas": [0, 0.9]` (JSON integers) passed too, then torch's AdamW refused
a pair of an int and a float: now a whole number given for a float is that float."""

import json
from pathlib import Path

import pytest
import torch
import yaml
from test_bad_input import run_cli

from sacscale.checks import InputError, check_learner_values
from sacscale.cli import main
from sacscale.learn.config import SACConfig
from sacscale.learn.learner import FastSACLearner
from sacscale.learn.networks import Actor, DistributionalCritic
from sacscale.learner_limits import actor_params, critic_params
from sacscale.pipeline.runplan import Host, PlanError, resolve
from sacscale.train.config import TrainConfig, sac_config

REPO = Path(__file__).resolve().parents[2]
WIDE = [16384] * 16
TOO_LARGE = (f"--extra critic_hidden {WIDE} with num_atoms 101: the twin critic would hold 8,062,206,154 parameters, "
             "more than the 268,435,456 a network may hold (its weights, gradients and AdamW's moments in float32 "
             "must fit a GPU beside the batch)")
JUST_PAST = [16384, 16384]
ACTOR_TOO_LARGE = ("--extra actor_hidden [16384, 16384]: the actor would hold 271,089,722 parameters, more than "
                   "the 268,435,456 a network may hold (its weights, gradients and AdamW's moments in float32 must "
                   "fit a GPU beside the batch)")
BENCH = ["learner-bench", "--modes", "eager", "--batch", "8", "--iters", "1", "--warmup", "0", "--num-envs", "8",
         "--device", "cpu"]
SMALL_NETS = {"actor_hidden": [16], "critic_hidden": [16], "num_atoms": 11}


@pytest.mark.parametrize("hidden, atoms", [((512, 256, 128), 101), ((768, 384, 192), 101), ((7,), 2), ((33, 5), 17)])
def test_the_counts_are_torchs(hidden, atoms):
    actor = Actor(98, 29, hidden)
    critic = DistributionalCritic(101, 29, hidden, atoms)
    assert actor_params(98, 29, hidden) == sum(p.numel() for p in actor.parameters())
    assert critic_params(101, 29, hidden, atoms) == sum(p.numel() for p in critic.parameters())


def test_the_case_is_named_by_the_checks_of_every_command():
    # the commands' own tests below take a network just past the bound: were the check lost, the
    # case itself (tens of GB) would drive the test machine into the OOM killer
    with pytest.raises(InputError) as exc:
        check_learner_values({"critic_hidden": WIDE}, {"critic_hidden"})
    assert str(exc.value) == TOO_LARGE


def test_train_names_the_network_too_large_before_anything_starts(tmp_path, capsys):
    code, err, _ = run_cli(tmp_path, capsys, "--extra", json.dumps({"actor_hidden": JUST_PAST}))
    assert code == 2 and err.strip() == f"sacscale train: error: {ACTOR_TOO_LARGE}", err


def test_planning_refuses_it_naming_the_config_key():
    presets = yaml.safe_load((REPO / "workflow" / "presets.yaml").read_text())
    config = {"preset": "cpu", "run_configs": {"n1_cpu": {"overrides": {"extra": json.dumps({"critic_hidden": WIDE})}}}}
    with pytest.raises(PlanError) as exc:
        resolve(config, presets, Host(cuda_devices=0, cpus=frozenset(range(2))))
    assert str(exc.value) == f"run_configs.n1_cpu.overrides.extra: {TOO_LARGE}"


def test_learner_bench_refuses_it_before_the_work(capsys):
    code = main([*BENCH, "--extra", json.dumps({"actor_hidden": JUST_PAST})])
    assert code == 2 and capsys.readouterr().err.strip() == f"sacscale learner-bench: error: {ACTOR_TOO_LARGE}"


def test_whole_numbers_for_floats_are_those_floats():
    cfg = SACConfig(betas=[0, 0.9], lr=1, gamma=1, mean_clip=5)
    assert cfg.betas == (0.0, 0.9) and all(type(b) is float for b in cfg.betas)
    assert all(type(v) is float for v in (cfg.lr, cfg.gamma, cfg.mean_clip))
    assert SACConfig(obs_norm=True).obs_norm is True  # a bool is left as it is


def test_trains_config_takes_integer_betas_and_the_learner_builds():
    sac = sac_config(TrainConfig(num_envs=8, batch_size=8, extra={"betas": [0, 0.9], **SMALL_NETS}))
    assert sac.betas == (0.0, 0.9)
    learner = FastSACLearner(sac, num_envs=8, device="cpu", compile=False, cuda_graph=False)
    assert all(group["betas"] == (0.0, 0.9) for opt in learner.optimizers.values() for group in opt.param_groups)


def test_learner_bench_runs_with_integer_betas(tmp_path, capsys):
    torch.set_num_threads(1)
    code = main([*BENCH, "--extra", json.dumps({"betas": [0, 0.9], **SMALL_NETS}), "--out", str(tmp_path / "o.json")])
    assert code == 0, capsys.readouterr().err
    assert json.loads((tmp_path / "o.json").read_text())
