"""A stopped run continues with `--resume RUN_DIR`: same directory, the counters and the
TensorBoard steps go on from its last checkpoint, every rank from its own state; flags
that change what is learned cannot change on the way."""

import json
import shutil
import signal
import subprocess
import sys
import time

import pytest
import torch
from torch.utils.tensorboard import SummaryWriter

from sacscale.analysis.events import read_event_dir, read_run
from sacscale.cli import main
from sacscale.learn.networks import Actor
from sacscale.train.checkpoint import checkpoint_path, rank_state_path

SMALL = '{"learning_starts": 64, "actor_hidden": [32], "critic_hidden": [32], "num_atoms": 11}'
ARGS = ["--num-envs", "8", "--batch-size", "32", "--log-every", "2", "--replay-per-env", "16",
        "--num-critic-updates", "1", "--num-actor-updates", "1", "--extra", SMALL, "--checkpoint-every", "3",
        "--checkpoint-replay", "--obs-norm", "--timeout-s", "120"]


def _last_iteration(run_dir):
    try:
        return max(s.step for s in read_run(run_dir)[0].get("Perf/iteration", []))
    except Exception:  # noqa: BLE001 - not written yet
        return 0


@pytest.fixture(scope="module")
def stopped(tmp_path_factory):
    """A 2-rank run stopped by SIGTERM after at least 7 iterations (checkpoints every 3)."""
    run = tmp_path_factory.mktemp("resume") / "run"
    cmd = [sys.executable, "-m", "sacscale.cli", "train", "--devices", "cpu,cpu", "--iterations", "100000",
           *ARGS, "--log-dir", str(run)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 240  # start-up on a loaded 2-core machine
        while _last_iteration(run) < 7:
            assert proc.poll() is None, proc.stderr.read()
            assert time.monotonic() < deadline, "the run logged no iterations"
            time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(120) == 128 + signal.SIGTERM
    finally:
        if proc.poll() is None:
            proc.kill()
    return run


def _copy(run, tmp_path):
    dst = tmp_path / "run"
    shutil.copytree(run, dst)
    return dst


def test_a_stopped_two_rank_run_keeps_its_last_periodic_checkpoint(stopped):
    """Several ranks keep the last periodic checkpoint (every 3 iterations), whole and
    loadable; one rank saves its last iteration on the way out (test_logging_and_checkpoint)."""
    ckpt = torch.load(checkpoint_path(stopped), map_location="cpu", weights_only=True)
    assert ckpt["iteration"] >= 6 and ckpt["iteration"] % 3 == 0
    assert ckpt["env_steps"] == 8 * ckpt["iteration"] and ckpt["total_env_steps"] == 2 * ckpt["env_steps"]
    actor = Actor(**ckpt["actor_kwargs"])  # with --obs-norm: its statistics are part of the policy
    actor.load_flat(ckpt["actor_flat"])
    assert torch.equal(actor.flat_parameters(), ckpt["actor_flat"])
    assert not list(checkpoint_path(stopped).parent.glob(".*tmp*"))  # no half-written file left


def test_a_stopped_run_resumes_from_its_checkpoint_and_counts_on(stopped, tmp_path):
    run = _copy(stopped, tmp_path)
    done = torch.load(checkpoint_path(run), weights_only=True)["iteration"]
    logged_before = _last_iteration(run)
    # checkpoints every 3 iterations, log points every 2: the stop may land between a
    # checkpoint and the next log point (checkpoint 15, last log point 14)
    assert done % 3 == 0 and done >= 6 and logged_before >= done - 1
    assert main(["train", "--resume", str(run), "--iterations", str(done + 6)]) == 0

    ckpt = torch.load(checkpoint_path(run), weights_only=True)
    assert ckpt["iteration"] == done + 6 and ckpt["total_env_steps"] == 2 * 8 * (done + 6)
    for rank in (0, 1):
        part = torch.load(rank_state_path(run, rank), weights_only=True)
        assert part["iteration"] == done + 6 and part["env_steps"] == 8 * (done + 6)
        # the stopped sitting's rows were restored: 8 per iteration since the start, at most 16 per env
        assert part["learner"]["replay"]["size"] == min(8 * (done + 6), 8 * 16)
    ranks = read_run(run)
    for rank in (0, 1):
        steps = [s.step for s in ranks[rank]["Perf/iteration"]]
        assert steps == sorted(set(steps)) and steps[-1] == done + 6  # what the stopped sitting logged past
        # its checkpoint is superseded by the resumed sitting
        env_steps = {s.step: s.value for s in ranks[rank]["Perf/rank_env_steps"]}
        assert all(env_steps[it] == 8 * it for it in env_steps)
    meta = json.loads((run / "train_meta.json").read_text())
    assert meta["status"] == "completed" and meta["config"]["iterations"] == done + 6
    assert [s["from_iteration"] for s in meta["sittings"]] == [done]
    assert meta["sittings"][0]["previous_status"] == "interrupted"
    assert meta["config"]["obs_norm"] is True and meta["config"]["batch_size"] == 32  # the run's own flags


def test_a_checkpoint_of_fewer_ranks_than_the_runs_devices_is_refused(stopped, tmp_path, capsys):
    """final.pt's world_size was never held to the run's devices, and only its ranks' states were
    judged: rank 1's, unjudged, failed in the rank with two tracebacks once the run had begun."""
    run = _copy(stopped, tmp_path)
    ckpt = torch.load(checkpoint_path(run), weights_only=True)
    ckpt.update(world_size=1, total_env_steps=ckpt["total_env_steps"] // 2)
    torch.save(ckpt, checkpoint_path(run))
    assert main(["train", "--resume", str(run), "--iterations", str(ckpt["iteration"] + 3)]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"sacscale train: error: --resume: {checkpoint_path(run)}: not a checkpoint the trainer wrote (its world_size "
        "1 is not the 2 rank(s) of its devices cpu,cpu)"]


def test_a_resume_may_not_change_what_is_learned(stopped, tmp_path, capsys):
    run = _copy(stopped, tmp_path)
    done = torch.load(checkpoint_path(run), weights_only=True)["iteration"]
    before = sorted(p.name for p in (run / "tb" / "rank0").iterdir())
    assert main(["train", "--resume", str(run), "--iterations", str(done + 3), "--batch-size", "16"]) == 2
    assert "--batch-size 16 differs from the resumed run's 32" in capsys.readouterr().err
    assert main(["train", "--resume", str(run), "--iterations", str(done)]) == 2
    assert f"at iteration {done}; give --iterations larger" in capsys.readouterr().err
    rank_state_path(run, 1).unlink()
    assert main(["train", "--resume", str(run), "--iterations", str(done + 3)]) == 2
    assert "rank1.pt is missing" in capsys.readouterr().err
    assert sorted(p.name for p in (run / "tb" / "rank0").iterdir()) == before  # nothing started


def test_a_resumed_sitting_supersedes_what_the_stopped_one_logged_past_its_checkpoint(tmp_path):
    # the sittings' wall times, given: the files are ordered by their first event's time,
    # which the clock would give the same way one sitting after the other
    first = SummaryWriter(str(tmp_path))
    for step in range(1, 16):
        first.add_scalar("x", float(step), step, walltime=1000.0 + step)
    first.close()
    second = SummaryWriter(str(tmp_path), purge_step=13)
    for step in range(13, 19):
        second.add_scalar("x", 100.0 + step, step, walltime=2000.0 + step)
    second.close()
    assert len(list(tmp_path.glob("events.out.tfevents.*"))) == 2  # a file per sitting
    xs = read_event_dir(tmp_path)["x"]
    assert [s.step for s in xs] == list(range(1, 19))
    assert [s.value for s in xs] == [float(s) for s in range(1, 13)] + [100.0 + s for s in range(13, 19)]


def test_the_checkpoint_a_run_leaves_is_evaluated(stopped, tmp_path):
    """The trainer's own (version 2) checkpoint, as the pipeline's evaluate_run reads it."""
    from sacscale.eval.evaluate import evaluate

    result = evaluate(_copy(stopped, tmp_path), envs_per_command=1, seconds=1.5, settle_s=0.5)
    assert result["iteration"] == torch.load(checkpoint_path(stopped), weights_only=True)["iteration"]
    assert result["overall"]["episodes"] == 11


def test_a_flag_given_at_its_default_is_refused_where_the_run_differs(stopped, tmp_path, capsys):
    """`--no-obs-norm` and `--devices cpu` parse to the defaults, and were taken for left out:
    the run resumed with its own settings without a word about the flags given."""
    run = _copy(stopped, tmp_path)
    done = torch.load(checkpoint_path(run), weights_only=True)["iteration"]
    assert main(["train", "--resume", str(run), "--iterations", str(done + 3), "--no-obs-norm"]) == 2
    assert "--resume: --no-obs-norm differs from the resumed run's --obs-norm" in capsys.readouterr().err
    assert main(["train", "--resume", str(run), "--iterations", str(done + 3), "--devices", "cpu"]) == 2
    assert "--resume: --devices cpu differs from the resumed run's cpu,cpu" in capsys.readouterr().err
