"""Resuming a pipeline run. Its run folder keeps a policy-only checkpoint and its learning
state is moved to logs/<set>/learning_state/<run>/; the refusal advised resuming "from a
directory that holds it", and that folder was then refused as no run directory. Now both
refusals say what resumes: a copy of the run folder with the learning state's checkpoints
copied into it (the first names where run.json says the state went), and that does."""

import json
import shutil

from cli_runs import sacscale
from sacscale.pipeline.completed_run import move_learning_state
from test_resume_one_sitting_at_once import ARGS


def test_the_advice_for_a_pipeline_runs_folder_resumes(tmp_path):
    run = tmp_path / "runs" / "r1"
    done = sacscale("train", *ARGS, "--iterations", "2", "--log-dir", run)
    assert done.returncode == 0, done.stderr
    state = tmp_path / "logs" / "S" / "learning_state" / "r1"
    (run / "run.json").write_text(json.dumps({"learning_state": move_learning_state(run, state)}))

    policy_only = sacscale("train", "--resume", run, "--iterations", "3")
    assert policy_only.returncode == 2 and len(policy_only.stderr.strip().splitlines()) == 1, policy_only.stderr
    assert (f"--resume {run}: its checkpoint is a policy-only copy (a pipeline run's: its learning state was moved "
            f"to {state}); to resume it, copy {run} to a folder of your own, copy {state}/checkpoints/* into the "
            "copy's checkpoints/ (replacing any final.pt) and resume the copy") in policy_only.stderr

    state_alone = sacscale("train", "--resume", state, "--iterations", "3")
    assert state_alone.returncode == 2 and len(state_alone.stderr.strip().splitlines()) == 1, state_alone.stderr
    assert (f"--resume {state}: not a run directory (no train_meta.json): a learning state alone (a pipeline run's, "
            "logs/<run set>/learning_state/<run>/?); copy the run's folder (results/<run set>/runs/<run>/) to a "
            "folder of your own, copy these checkpoints/* into the copy's checkpoints/ and resume the "
            "copy") in state_alone.stderr

    copy = tmp_path / "mine"
    shutil.copytree(run, copy)
    for f in (state / "checkpoints").iterdir():
        shutil.copy2(f, copy / "checkpoints" / f.name)
    resumed = sacscale("train", "--resume", copy, "--iterations", "3")
    assert resumed.returncode == 0, resumed.stderr
    assert f"resuming {copy} at iteration 2" in resumed.stderr


def test_a_pipeline_run_whose_policy_was_moved_out_too_gets_the_same_advice(tmp_path):
    """A throughput run's policy is moved out of the set (logs/<set>/left_out/<run>/) as well as
    its learning state: its copy has no checkpoints/final.pt, and the refusal said only
    `.../checkpoints/final.pt: no checkpoint there`."""
    run = tmp_path / "runs" / "r1"
    done = sacscale("train", *ARGS, "--iterations", "2", "--log-dir", run)
    assert done.returncode == 0, done.stderr
    state = tmp_path / "logs" / "S" / "learning_state" / "r1"
    (run / "run.json").write_text(json.dumps({"learning_state": move_learning_state(run, state)}))
    (run / "checkpoints" / "final.pt").unlink()  # the policy moved to left_out/
    refused = sacscale("train", "--resume", run, "--iterations", "3")
    assert refused.returncode == 2 and len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert (f"--resume {run}: it has no checkpoints/final.pt (a pipeline run's: its policy was left out of the set and "
            f"its learning state moved); to resume it, copy {run} to a folder of your own, copy {state}/checkpoints/* "
            "into the copy's checkpoints/ (replacing any final.pt) and resume the copy") in refused.stderr
