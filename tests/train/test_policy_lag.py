"""The collector acts on weights at most one iteration old, also when the learner is the
slower side (small env count, large batch on CPU)."""

import glob

from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

from sacscale.cli import main


def _scalars(run_dir, tag):
    values = []
    for path in glob.glob(str(run_dir / "tb" / "rank0" / "events.out.tfevents.*")):
        for event in EventFileLoader(path).Load():
            for v in event.summary.value:
                if v.tag == tag:
                    values.append(v.tensor.float_val[0] if v.tensor.float_val else v.simple_value)
    return values


def test_policy_lag_is_at_most_one_iteration_with_a_slow_learner(tmp_path):
    run = tmp_path / "run"
    code = main(["train", "--devices", "cpu", "--num-envs", "4", "--batch-size", "512",
                 "--iterations", "10", "--log-every", "1", "--replay-per-env", "128",  # the batch fits the replay
                 "--extra", '{"learning_starts": 8}', "--log-dir", str(run), "--timeout-s", "120"])
    assert code == 0
    lags = _scalars(run, "Train/policy_lag")
    assert len(lags) == 10
    assert max(lags) <= 1.0, lags
    assert max(lags) >= 0.0
