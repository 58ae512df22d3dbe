"""train-reference asked the reference's interpreter for its package before it judged its own
options: with an interpreter lacking the reference, every bad option got the same line
(`... cannot import the reference: Traceback ...`), and a user met them one by one after
installing it. The options are judged first, each in one line, exit 2, nothing made; an
override of a key the command sets from its own options (it overrode --num-envs unrecorded)
is refused."""

import sys

import pytest

from cli_runs import one_line, sacscale


@pytest.mark.parametrize("option, says", [
    (["--override", "noequals"], "--override 'noequals': not KEY=VALUE (a Hydra override, e.g. algo.gamma=0.97)"),
    (["--override", "algo.num_envs=5"], "--override 'algo.num_envs=5': algo.num_envs is set by this command from its "
                                        "own options (--num-envs, --iterations, --seed, --devices, ...): give the "
                                        "option instead"),
    (["--override", "gamma=0.9"], "--override 'gamma=0.9': a unilab run's overrides are the reference's Hydra keys"),
    (["--collector-cpu-ids", "0-99999"], "--collector-cpu-ids, rank 0 ('0-99999'): CPU range '0-99999'"),
    (["--meshes", "/nonexistent"], "--meshes /nonexistent: not a folder (the asset package's G1 STL files)"),
])
def test_a_bad_option_is_named_before_the_reference_is_asked(tmp_path, option, says):
    done = sacscale("train-reference", "--reference-python", sys.executable, "--log-dir", tmp_path / "run", *option)
    one_line(done, f"sacscale train-reference: error: {says}")
    assert "cannot import the reference" not in done.stderr
    assert not (tmp_path / "run").exists()
