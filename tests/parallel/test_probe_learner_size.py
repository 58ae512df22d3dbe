"""The correctness probe judges the learner's size before any rank starts, by the bound
train judges its batch by: the single-process reference learns from every rank's rows at
once, so its batch (batch x ranks) is the one judged. Each refusal is one line, exit 2."""

import subprocess
import sys

import pytest

from sacscale.parallel.probe import run_probe
from sacscale.parallel.probe_settings import ProbeSettings, size_problem
from sacscale.pipeline.planning import PlanError, _probe


def _probe_cli(tmp_path, *options):
    return subprocess.run([sys.executable, "-m", "sacscale", "probe", "correctness", *options,
                           "--output", str(tmp_path / "c.json")], capture_output=True, text=True, timeout=120)


def test_a_batch_train_refuses_is_refused_before_any_rank_starts(tmp_path):
    done = _probe_cli(tmp_path, "--devices", "cpu,cpu", "--iterations", "1", "--batch-size", "1048576")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [
        "sacscale probe: error: --batch-size 1048576 x 2 ranks of --devices (the single-process reference "
        "learns from all their rows at once) = 2097152 with actor_hidden [512, 256, 128], critic_hidden "
        "[768, 384, 192] and num_atoms 101: an update's activations would hold 8,812,232,704 values (batch rows "
        "x every layer's width through the actor and both critics), more than the 2,147,483,648 a learner may "
        "hold (kept in float32 for the backward pass, they must fit a GPU beside the networks); give a smaller "
        "batch or narrower layers"]
    assert not (tmp_path / "c.json").exists()


def test_the_ranks_multiply_the_reference_batch():
    """A batch each rank could hold alone is too large for the reference over 8 ranks."""
    assert size_problem(ProbeSettings(["cpu"], batch_size=300_000)) is None
    problem = size_problem(ProbeSettings(["cpu"] * 8, batch_size=300_000))
    assert problem.startswith("--batch-size 300000 x 8 ranks of --devices")


@pytest.mark.parametrize("options, message", [
    (["--iterations", "10000000000"], "--iterations must be at most 1,000,000,000, got 10000000000"),
    (["--trainer-iterations", "10000000000"], "--trainer-iterations must be at most 1,000,000,000, got 10000000000"),
    (["--batch-size", "-3"], "--batch-size must be positive (or 0: 64 on CPU, 8192 on CUDA), got -3"),
])
def test_counts_out_of_range_are_one_line(tmp_path, options, message):
    done = _probe_cli(tmp_path, "--devices", "cpu,cpu", *options)
    assert done.returncode == 2 and done.stderr.splitlines() == [f"sacscale probe: error: {message}"]


def test_run_probe_refuses_a_learner_too_large_for_its_callers_too(tmp_path):
    with pytest.raises(ValueError, match="the probe's learner critic_hidden"):
        run_probe(ProbeSettings(["cpu", "cpu"], learner={"critic_hidden": [16384] * 16}), str(tmp_path / "c.json"))


def test_the_plans_probe_is_judged_by_the_same_bound():
    """The pipeline's probe has no batch option: its default batch (8192 a GPU) over 64 GPUs is too large."""
    assert _probe({"probe": {"devices": "0,1"}}, {})["devices"] == "0,1"
    with pytest.raises(PlanError, match=r"^probe.devices: .*--batch-size 8192 x 64 ranks of --devices"):
        _probe({"probe": {"devices": ",".join(str(i) for i in range(64))}}, {})
