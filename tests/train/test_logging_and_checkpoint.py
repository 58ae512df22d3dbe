"""A CPU run logs every reward term (weighted and raw, interval means), the penalty scale
and the fall rate, and leaves a checkpoint of its policy that loads back."""

import glob
import signal
import subprocess
import sys
import time

import pytest
import torch
from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

from sacscale.cli import main
from sacscale.learn.networks import Actor
from sacscale.task.g1_walk_flat import TaskConfig
from sacscale.task.terms import REWARD_TERMS
from sacscale.train.checkpoint import CHECKPOINT_FORMAT, checkpoint_path

SMALL = '{"learning_starts": 64, "actor_hidden": [32], "critic_hidden": [32], "num_atoms": 11}'


def _scalars(run_dir):
    out = {}
    for path in glob.glob(str(run_dir / "tb" / "rank0" / "events.out.tfevents.*")):
        for event in EventFileLoader(path).Load():
            for v in event.summary.value:
                out.setdefault(v.tag, []).append(v.tensor.float_val[0] if v.tensor.float_val else v.simple_value)
    return out


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    run = tmp_path_factory.mktemp("logging") / "run"
    code = main(["train", "--devices", "cpu", "--num-envs", "8", "--batch-size", "32", "--iterations", "80",
                 "--log-every", "10", "--replay-per-env", "16", "--num-critic-updates", "1",
                 "--num-actor-updates", "1", "--extra", SMALL, "--log-dir", str(run), "--timeout-s", "120"])
    assert code == 0
    return run


def test_every_reward_term_is_logged_weighted_and_raw(run):
    tags = _scalars(run)
    cfg = TaskConfig()
    for term in REWARD_TERMS:
        weighted, raw = tags[f"Reward/{term}"], tags[f"RewardRaw/{term}"]
        assert len(weighted) == len(raw) == 8  # every log point
        if cfg.reward_weights[term] > 0:  # positive terms are not scaled by the curriculum
            w = cfg.reward_weights[term] * cfg.reward_dt_scale
            assert weighted == pytest.approx([w * r for r in raw], rel=1e-6), term
    assert tags["RewardRaw/alive"] == pytest.approx([1.0] * 8)
    scale = tags["Curriculum/penalty_scale"]
    assert all(lo <= x <= hi for x in scale for lo, hi in [cfg.penalty_scale_range])
    # random early policies fall: the ended episodes are mostly falls
    falls = tags["Episode/fall_rate"]
    assert falls and all(0.0 <= f <= 1.0 for f in falls) and max(falls) > 0.5


def test_the_final_checkpoint_loads_into_an_actor(run):
    ckpt = torch.load(checkpoint_path(run), map_location="cpu", weights_only=True)
    assert (ckpt["format"], ckpt["version"]) == CHECKPOINT_FORMAT
    assert ckpt["iteration"] == 80 and ckpt["env_steps"] == 640 and ckpt["total_env_steps"] == 640
    assert ckpt["task"] == {"tilt_obs": "world"}
    actor = Actor(**ckpt["actor_kwargs"])
    actor.load_flat(ckpt["actor_flat"])
    assert torch.equal(actor.flat_parameters(), ckpt["learner_state"]["actor"])
    a = actor.act(torch.zeros(3, 98), deterministic=True)
    assert a.shape == (3, 29) and bool((a.abs() < 1).all())


def _iterations_logged(run_dir):
    return max(_scalars(run_dir).get("Perf/iteration", [0]))


def test_a_stopped_run_keeps_its_last_checkpoint(tmp_path):
    """One rank saves the last completed iteration on the way out (a stopped 2-rank run,
    which keeps its last periodic checkpoint: test_resume.py's)."""
    run = tmp_path / "run"
    cmd = [sys.executable, "-m", "sacscale.cli", "train", "--devices", "cpu", "--num-envs", "8",
           "--batch-size", "32", "--iterations", "100000", "--log-every", "2", "--replay-per-env", "16",
           "--num-critic-updates", "1", "--num-actor-updates", "1", "--extra", SMALL,
           "--checkpoint-every", "3", "--log-dir", str(run), "--timeout-s", "120"]
    # SIGINT at its default: a suite started in the background ignores it, and so would the trainer
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 240  # start-up and first iterations on a loaded 2-core machine
        while _iterations_logged(run) < 6:
            assert proc.poll() is None, proc.stderr.read()
            assert time.monotonic() < deadline, "the run logged no iterations"
            time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        code = proc.wait(120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert code == 128 + signal.SIGINT
    ckpt = torch.load(checkpoint_path(run), map_location="cpu", weights_only=True)
    assert ckpt["iteration"] >= 6 and ckpt["env_steps"] == ckpt["total_env_steps"] == 8 * ckpt["iteration"]
    assert ckpt["iteration"] >= _iterations_logged(run) - 1
    actor = Actor(**ckpt["actor_kwargs"])
    actor.load_flat(ckpt["actor_flat"])
    assert torch.equal(actor.flat_parameters(), ckpt["learner_state"]["actor"])
    assert not list(checkpoint_path(run).parent.glob(".*tmp*"))  # no half-written file left
