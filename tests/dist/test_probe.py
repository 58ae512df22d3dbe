"""The correctness probe on CPU: 2 gloo ranks against the single-process reference."""

import json

import pytest

from sacscale.dist.probe import ProbeSettings, run_probe


@pytest.mark.slow
def test_two_gloo_ranks_match_the_concatenated_batch_reference(tmp_path):
    out = tmp_path / "correctness.json"
    result = run_probe(ProbeSettings(["cpu", "cpu"], iterations=2, batch_size=32, replay_rows=1024), str(out))
    assert result["pass"] is True, json.dumps(result["comparisons"], indent=1)
    assert result["world_size"] == 2 and result["backend"] == "gloo"
    assert result["initial_weights_identical"] and result["ranks_identical_after"]
    names = {c["tensor"] for c in result["comparisons"]}
    assert {"grad/critic", "grad/actor", "grad/alpha", "param/actor", "param/critic"} <= names
    # Summation order is the only difference in fp32: far inside the stated tolerance.
    for c in result["comparisons"]:
        assert c["max_rel_diff"] <= c["tolerance"]
    assert json.loads(out.read_text())["pass"] is True


@pytest.mark.slow
def test_probe_fails_when_ranks_do_not_sync(tmp_path):
    result = run_probe(ProbeSettings(["cpu", "cpu"], iterations=2, batch_size=32, replay_rows=1024,
                                     grad_sync=False), str(tmp_path / "c.json"))
    assert result["pass"] is False
    assert result["ranks_identical_after"] is False
    assert not all(c["pass"] for c in result["comparisons"] if c["tensor"].startswith("grad/"))
