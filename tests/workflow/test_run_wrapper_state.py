"""`sacscale record-run --state-dir`: a completed run keeps a policy-only checkpoint as
evidence (what evaluate and render read) and its learning state moves out of results/."""

import json
import subprocess
import sys
import textwrap

import torch

from pipeline_helpers import REPO

WRAPPER = REPO / "workflow" / "scripts" / "run_training.py"

# A stand-in trainer: an event file and a checkpoint pair in our format, or the reference
# trainer's layout with its own model file.
FAKE = textwrap.dedent("""
    import sys
    from pathlib import Path
    args = sys.argv[1:]
    log_dir = Path(args[args.index("--log-dir") + 1])
    if "--reference" in args:
        (log_dir / "trainer.json").write_text('{"trainer": "unilab"}')
        run = log_dir / "ref_logs" / "G1WalkFlat" / "2026-12-01_20-46-39_mujoco"
        run.mkdir(parents=True)
        (run / "events.out.tfevents.1.x").write_bytes(b"x")
        (run / "model_1000.pt").write_bytes(b"m" * 5000)
        sys.exit(0)
    import torch  # seconds: only where a checkpoint is written

    (log_dir / "tb" / "rank0").mkdir(parents=True)
    (log_dir / "tb" / "rank0" / "events.out.tfevents.1.x").write_bytes(b"x")
    (log_dir / "checkpoints").mkdir()
    torch.save({"format": "sacscale-checkpoint", "version": 2, "actor_flat": torch.arange(4.0),
                "actor_kwargs": {"obs_dim": 1}, "task": {"tilt_obs": "world"}, "iteration": 24,
                "learner_state": {"critic": torch.zeros(200_000)}, "optimizers": {"critic": torch.ones(100_000)}},
               log_dir / "checkpoints" / "final.pt")
    torch.save({"format": "sacscale-rank-state", "rank": 0}, log_dir / "checkpoints" / "rank0.pt")
""")


def wrap(tmp_path, *trainer_args):
    script = tmp_path / "fake_train.py"
    script.write_text(FAKE)
    runs = tmp_path / "results" / "S" / "runs"
    run_dir, work, state = runs / "p_r1_n1", runs / ".p_r1_n1.partial", tmp_path / "logs" / "S" / "learning_state"
    cmd = [sys.executable, str(WRAPPER), "--run-dir", str(run_dir), "--work-dir", str(work),
           "--attic", str(tmp_path / "logs" / "attempts"), "--state-dir", str(state),
           "--resolved-json", json.dumps({"run": "p_r1_n1", "seed": 1}), "--timeout", "60",
           "--", sys.executable, str(script), "--log-dir", str(work), *trainer_args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return run_dir, state / "p_r1_n1", json.loads((run_dir / "run.json").read_text())


def test_the_run_keeps_a_policy_only_checkpoint_and_the_learning_state_moves_out(tmp_path):
    run_dir, kept, record = wrap(tmp_path)
    policy = torch.load(run_dir / "checkpoints" / "final.pt", weights_only=True)
    full = torch.load(kept / "checkpoints" / "final.pt", weights_only=True)
    assert "learner_state" not in policy and "optimizers" not in policy
    assert torch.equal(policy["actor_flat"], full["actor_flat"]) and policy["iteration"] == 24
    assert "learner_state" in full and (kept / "checkpoints" / "rank0.pt").is_file()
    assert sorted(p.name for p in (run_dir / "checkpoints").iterdir()) == ["final.pt"]
    assert ((run_dir / "checkpoints" / "final.pt").stat().st_size * 10
            < (kept / "checkpoints" / "final.pt").stat().st_size)
    import hashlib

    digest = hashlib.sha256((kept / "checkpoints" / "final.pt").read_bytes()).hexdigest()
    assert policy["policy_only_of"]["sha256"] == digest
    assert record["learning_state"]["sha256_by_file"]["checkpoints/final.pt"] == digest
    assert record["learning_state"]["moved_to"] == str(kept)


def test_the_reference_trainers_model_file_moves_out_too(tmp_path):
    run_dir, kept, record = wrap(tmp_path, "--reference")
    rel = "ref_logs/G1WalkFlat/2026-12-01_20-46-39_mujoco/model_1000.pt"
    assert not (run_dir / rel).exists() and (kept / rel).read_bytes() == b"m" * 5000
    assert (run_dir / rel).parent.joinpath("events.out.tfevents.1.x").is_file()
    assert list(record["learning_state"]["sha256_by_file"]) == [rel]


def test_a_rerun_keeps_the_earlier_learning_state_beside_its_own(tmp_path):
    _, kept, _ = wrap(tmp_path)
    (tmp_path / "results" / "S" / "runs" / "p_r1_n1" / "run.json").unlink()  # as a rerun sees it: superseded
    _, kept_again, _ = wrap(tmp_path)
    assert kept_again == kept and (kept / "checkpoints" / "final.pt").is_file()
    assert len(list(kept.parent.glob("p_r1_n1.superseded-*"))) == 1


def test_resuming_the_policy_only_copy_is_refused_naming_where_the_state_is(tmp_path, capsys):
    from sacscale.cli import main
    from sacscale.train.checkpoint import write_policy_only

    full = tmp_path / "full" / "checkpoints" / "final.pt"
    full.parent.mkdir(parents=True)
    torch.save({"format": "sacscale-checkpoint", "version": 2, "actor_flat": torch.zeros(2), "train_config": {},
                "learner_state": {}, "optimizers": {}}, full)
    run = tmp_path / "run"
    write_policy_only(full, run / "checkpoints" / "final.pt")
    code = main(["train", "--resume", str(run), "--devices", "cpu", "--iterations", "4"])
    assert code != 0
    assert "policy-only copy" in capsys.readouterr().err
