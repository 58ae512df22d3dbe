"""A CPU run whose transitions carry NaN or inf (injected between the collector's slot and
the replay, where corrupt data would enter) finishes, drops each such row, counts it in
the events (Faults/nonfinite_rows) and in train_meta.json, and names the first one."""

import glob
import json
import math

import pytest
from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

from sacscale.cli import main
from sacscale.train import logs, rank

SMALL = '{"learning_starts": 64, "actor_hidden": [32], "critic_hidden": [32], "num_atoms": 11}'
# iteration -> (field, env, value); learning starts at iteration 8 (64 rows of 8 envs)
INJECT = {3: ("reward", 5, math.nan), 12: ("next_actor_obs", 1, math.inf), 17: ("terminated", 0, math.nan),
          18: ("critic_obs", 6, -math.inf)}


def _scalars(run_dir, tag):
    out = []
    for path in glob.glob(str(run_dir / "tb" / "rank0" / "events.out.tfevents.*")):
        for event in EventFileLoader(path).Load():
            for v in event.summary.value:
                if v.tag == tag:
                    out.append((event.step, v.tensor.float_val[0] if v.tensor.float_val else v.simple_value))
    return sorted(out)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    run_dir = tmp_path_factory.mktemp("nonfinite") / "run"
    stage, calls = rank.stage_batch, {"n": 0}

    def poisoned_stage(arrays, staging, device):
        batch = stage(arrays, staging, device)
        calls["n"] += 1
        if calls["n"] in INJECT:
            field, env, value = INJECT[calls["n"]]
            t = batch[field]
            if t.dim() == 1:
                t[env] = value
            else:
                t[env, 0] = value
        return batch

    said = []
    say = logs.say_above_bar

    def recording_say(bar, message):
        said.append(message)
        say(bar, message)

    patch = pytest.MonkeyPatch()
    patch.setattr(rank, "stage_batch", poisoned_stage)
    patch.setattr(logs, "say_above_bar", recording_say)
    try:
        code = main(["train", "--devices", "cpu", "--num-envs", "8", "--batch-size", "32", "--iterations", "30",
                     "--log-every", "10", "--replay-per-env", "16", "--num-critic-updates", "2",
                     "--num-actor-updates", "1", "--extra", SMALL, "--log-dir", str(run_dir), "--timeout-s", "120"])
    finally:
        patch.undo()
    assert code == 0  # no divergence, no index error
    return run_dir, said


def test_each_non_finite_row_is_counted_at_the_log_points(run):
    run, _ = run
    # by iteration 10 one row (iteration 3), by 20 all four, none after
    assert _scalars(run, "Faults/nonfinite_rows") == [(10, 1.0), (20, 4.0), (30, 4.0)]
    # dropped rows are never sampled, so no critic target was ever non-finite
    assert [v for _, v in _scalars(run, "Faults/nonfinite_targets")] == [0.0, 0.0, 0.0]


def test_train_meta_holds_the_totals(run):
    run, _ = run
    meta = json.loads((run / "train_meta.json").read_text())
    assert meta["status"] == "completed"
    assert (meta["nonfinite_rows"], meta["nonfinite_targets"], meta["nonfinite_rows_by_rank"]) == (4, 0, [4])
    assert meta["nonfinite_target_sources"] == {"reward": 0, "termination": 0, "next_logp": 0, "next_value": 0}


def test_the_first_row_is_named_once(run):
    _, said = run
    named = [line for line in said if "non-finite" in line]
    assert named == ["sacscale train: rank 0: dropped a non-finite transition at iteration 3: env 5, field(s) "
                     "reward (never sampled; Faults/nonfinite_rows counts every such row)"]


def test_the_naming_line_counts_back_to_the_iteration(capsys):
    """The line names the iteration of the add, the env and the fields, once."""
    from types import SimpleNamespace

    class Replay:
        adds = 20

        @staticmethod
        def describe_first_nonfinite():
            return {"add": 2, "row": 5, "fields": ["reward"]}

    learner = SimpleNamespace(replay=Replay(), nonfinite_counts=lambda: {"nonfinite_rows": 2, "nonfinite_targets": 0})
    interval = logs.Interval()
    for it in (20, 30):
        scalars = logs.nonfinite_scalars(learner, interval, it, 0, None)
        assert scalars == {"Faults/nonfinite_rows": 2, "Faults/nonfinite_targets": 0}
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["sacscale train: rank 0: dropped a non-finite transition at iteration 3: env 5, field(s) reward "
                   "(never sampled; Faults/nonfinite_rows counts every such row)"]
    learner.nonfinite_counts = lambda: {"nonfinite_rows": 2, "nonfinite_targets": 16}
    learner.nonfinite_target_sources = lambda: {"reward": 0, "termination": 0, "next_logp": 16, "next_value": 3}
    for it in (40, 50):
        logs.nonfinite_scalars(learner, interval, it, 0, None)
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["sacscale train: rank 0: 16 critic target(s) not finite by iteration 40 although their rows "
                   "passed the replay's check (not finite: next_logp 16, next_value 3); given no mass "
                   "(Faults/nonfinite_targets counts them)"]
