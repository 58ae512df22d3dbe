"""train-reference judged --num-envs and --iterations only after the reference answered
(`UnilabRun`, exit 1; with an interpreter lacking the reference the line named only the
missing package) and never judged a repeated GPU in --devices, which train and planning
refuse for the reference. Now each is named in one line, exit 2, before the reference is
asked, with the bounds planning holds a unilab run to; nothing is made."""

import sys

import pytest

from cli_runs import one_line, sacscale


@pytest.mark.parametrize("option, says", [
    (["--num-envs", "0"], "--num-envs: must be an integer >= 1, got 0"),
    (["--num-envs", "2000000"], "--num-envs: must be an integer >= 1 and <= 1048576, got 2000000"),
    (["--iterations", "-1"], "--iterations: must be an integer >= 1, got -1"),
    (["--iterations", "10000000000"], "--iterations: must be an integer >= 1 and <= 1000000000, got 10000000000"),
    (["--devices", "0,0"], "--devices 0,0: repeats a GPU, which only our trainer (sacscale train) supports; name "
                           "each GPU once"),
])
def test_a_size_or_a_repeated_gpu_is_named_before_the_reference_is_asked(tmp_path, option, says):
    done = sacscale("train-reference", "--reference-python", sys.executable, "--log-dir", tmp_path / "run", *option)
    one_line(done, f"sacscale train-reference: error: {says}")
    assert "cannot import the reference" not in done.stderr
    assert not (tmp_path / "run").exists()
