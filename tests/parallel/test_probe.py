"""The correctness probe on CPU: 2 gloo ranks against the single-process reference, the
sync judged exactly, the trainer's own rank code; each broken sync makes it fail.

One probe runs with the networks that are trained (reference sizes; its record is also
the one checked against verify's formulas); the others use small networks (`SMALL_NETS`):
what they check, that a broken sync fails and that the trainer's path ends bit-identical,
does not depend on the layer widths, and two ranks of reference-size networks cost
minutes on 2 cores. The GPU suite runs reference sizes."""

import copy
import dataclasses
import json

import pytest

from sacscale.parallel.probe import run_probe
from sacscale.parallel.probe_settings import MUTATIONS, SYNC_REL_TOL, ProbeSettings
from sacscale.train.probe import TrainerProbeSettings, fewest_iterations, run_trainer_probe

pytestmark = pytest.mark.slow
SMALL = dict(iterations=2, batch_size=32, replay_rows=1024)
SMALL_NETS = {"actor_hidden": [32, 32], "critic_hidden": [48, 32], "num_atoms": 21}


# Each probe spawns its ranks (seconds of torch imports): a probe that tests only read runs
# once for the module, and each test takes a copy of its record.
@pytest.fixture(scope="module")
def reference_size_probe(tmp_path_factory):
    """(record file, record): two gloo ranks with the networks that are trained."""
    out = tmp_path_factory.mktemp("probe") / "correctness.json"
    return out, run_probe(ProbeSettings(["cpu", "cpu"], **SMALL), str(out))


@pytest.fixture(scope="module")
def small_trainer_probe(tmp_path_factory):
    """The trainer's path, unbroken, with small networks."""
    return run_trainer_probe(TrainerProbeSettings(["cpu", "cpu"], extra=SMALL_NETS),
                             str(tmp_path_factory.mktemp("trainer_probe") / "t.json"))


def test_two_gloo_ranks_match_the_concatenated_batch_reference(reference_size_probe):
    out, result = reference_size_probe
    result = copy.deepcopy(result)
    assert result["pass"] is True, json.dumps(result["comparisons"], indent=1)
    assert result["world_size"] == 2 and result["backend"] == "gloo"
    assert "learner_overrides" not in result  # the networks that are trained
    # ranks were built from different seeds, so the agreement is the broadcast's doing
    assert result["ranks_started_apart"] and any(v > 0 for v in result["rank_spread_before_broadcast_max_abs"].values())
    assert result["initial_weights_identical"] and result["ranks_identical_after"]
    names = {c["tensor"] for c in result["comparisons"]}
    assert {"grad/critic", "grad/actor", "grad/alpha", "param/actor", "param/critic",
            "sync/critic", "sync/actor", "sync/alpha"} <= names
    # Summation order is the only difference in fp32: inside the stated tolerance, the
    # parameters judged normwise (AdamW magnifies it one near-zero gradient entry at a time)
    for c in result["comparisons"]:
        assert c["rel_diff"] <= c["tolerance"]
        assert c["criterion"] == ("norm" if c["tensor"].startswith("param/") else "max")
    assert json.loads(out.read_text())["pass"] is True


def test_a_probe_record_measures_what_verify_derives_from_the_code(reference_size_probe, small_trainer_probe):
    """The record names the code's list of compared tensors (verify holds a record to it) and
    agrees with every formula verify reads it by (sacscale.evidence.probe_measures): the
    record the pipeline keeps, of the networks that are trained, with a trainer path."""
    from sacscale.evidence.probe_measures import measure_problems
    from sacscale.parallel.probe_tensors import compared_tensors

    result = copy.deepcopy(reference_size_probe[1])
    result["trainer_path"] = copy.deepcopy(small_trainer_probe)
    assert tuple(c["tensor"] for c in result["comparisons"]) == compared_tensors("learner")
    assert tuple(c["tensor"] for c in result["trainer_path"]["comparisons"]) == compared_tensors("trainer")
    assert measure_problems(result) == []


def test_the_probes_write_only_the_fields_the_report_shows(tmp_path, small_trainer_probe):
    """verify names any other key of correctness.json (sacscale.evidence.written_keys), and
    the report shows these only: every key and column the probes write is in their lists."""
    from sacscale.evidence.written_keys import probe_keys

    result = run_probe(ProbeSettings(["cpu", "cpu"], learner=SMALL_NETS, **SMALL), str(tmp_path / "c.json"))
    result["trainer_path"] = copy.deepcopy(small_trainer_probe)
    assert probe_keys(result) == []


@pytest.mark.parametrize("mutation", MUTATIONS)
def test_each_broken_sync_fails_the_probe(tmp_path, mutation):
    result = run_probe(ProbeSettings(["cpu", "cpu"], mutation=mutation, learner=SMALL_NETS, **SMALL),
                       str(tmp_path / "c.json"))
    assert result["pass"] is False and result["mutation"] == mutation
    assert result["learner_overrides"] == SMALL_NETS  # recorded, so a small-network probe is never mistaken
    failed = {c["tensor"] for c in result["comparisons"] if not c["pass"]}
    if mutation == "no_broadcast":
        assert result["ranks_identical_after"] is False and not result["initial_weights_identical"]
    else:
        assert {"sync/critic", "sync/actor"} <= failed  # the exact sync check sees it


def test_probe_fails_when_ranks_do_not_sync(tmp_path):
    result = run_probe(ProbeSettings(["cpu", "cpu"], grad_sync=False, learner=SMALL_NETS, **SMALL),
                       str(tmp_path / "c.json"))
    assert result["pass"] is False
    assert result["ranks_identical_after"] is False
    assert not all(c["pass"] for c in result["comparisons"] if c["tensor"].startswith("grad/"))


def test_bf16_a_0_1_percent_error_on_one_rank_fails(tmp_path):
    ok = run_probe(ProbeSettings(["cpu", "cpu"], amp_dtype="bfloat16", learner=SMALL_NETS, **SMALL),
                   str(tmp_path / "ok.json"))
    assert ok["pass"] is True and ok["autocast_dtype"] == "bfloat16"
    bad = run_probe(ProbeSettings(["cpu", "cpu"], amp_dtype="bfloat16", mutation="scale_rank1",
                                  learner=SMALL_NETS, **SMALL),
                    str(tmp_path / "bad.json"))
    assert bad["pass"] is False
    grads = [c for c in bad["comparisons"] if c["tensor"].startswith("grad/")]
    assert all(c["pass"] for c in grads)  # bf16 noise hides it from the reference comparison ...
    syncs = [c for c in bad["comparisons"] if c["tensor"].startswith("sync/")]
    assert syncs and all(c["max_rel_diff"] > 10 * SYNC_REL_TOL for c in syncs)  # ... not from the sync check


def test_trainer_path_ends_bit_identical(small_trainer_probe):
    result = small_trainer_probe
    assert result["pass"] is True, result["checks"]
    assert result["learner_overrides"] == SMALL_NETS
    assert all(result["checks"].values()) and result["learner_updates_per_rank"] >= 1
    assert all(v == 0 for v in result["rank_spread_max_abs"].values())


@pytest.mark.parametrize("mutation", MUTATIONS)
def test_trainer_path_fails_on_each_broken_sync(tmp_path, mutation):
    # the fewest iterations (one learner update a rank): the first synced step already shows
    # a broken sync, and more iterations only repeat it (measured: 9.3 -> 7.4 s a probe)
    settings = TrainerProbeSettings(["cpu", "cpu"], mutation=mutation, extra=SMALL_NETS)
    settings = dataclasses.replace(settings, iterations=fewest_iterations(settings))
    result = run_trainer_probe(settings, str(tmp_path / "t.json"))
    assert result["pass"] is False, result["checks"]
    assert result["learner_updates_per_rank"] >= 1  # it compared a synced step
    # where the ranks ended apart, the trainer's own end-of-run check found it too
    apart = not result["checks"]["ranks_bit_identical_after"]
    assert (result["trainer_found_ranks_apart"] is not None) == apart, result
    if apart:
        assert "the data-parallel sync failed" in result["trainer_found_ranks_apart"]


def test_parameters_are_judged_normwise_one_amplified_entry_passes_a_systematic_error_fails():
    """AdamW can turn summation order on one near-zero gradient entry into a large part of
    that entry's step (seen on CPU: 4.7e-3 of the largest change, elementwise); a learner
    that moves every parameter 0.2% differently (a wrong step size) must still fail."""
    import torch

    from sacscale.parallel.probe import _compare
    from sacscale.parallel.probe_settings import TOLERANCES

    tol = TOLERANCES["float32"]["param_rel"]
    gen = torch.Generator().manual_seed(0)
    start = torch.randn(4096, generator=gen)
    change = 1e-3 * torch.randn(4096, generator=gen)
    ref = start + change
    one_entry = ref.clone()
    one_entry[7] += 5e-3 * change.abs().max()
    c = _compare("param/actor", one_entry, ref, change, tol, "norm")
    assert c["max_rel_diff"] > 2e-3 and c["pass"] and c["rel_diff"] == c["norm_rel_diff"] < tol
    assert not _compare("param/actor", one_entry, ref, change, tol, "max")["pass"]  # elementwise it would fail
    c = _compare("param/actor", start + 1.002 * change, ref, change, tol, "norm")
    assert not c["pass"] and abs(c["rel_diff"] - 2e-3) < 1e-5
