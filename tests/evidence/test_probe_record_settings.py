"""verify derives the correctness probe's settings from the code (its tolerance table, its
mutations, its sizes) and from plan.json's `probe`, and compares the record's field by
field: a record rewritten with its manifest to judge by tolerances of 1.0, to have run
without gradient sync or with a broken sync on purpose, with half the reference batch, in
bfloat16 with float32 judgments, or to say its losses were compiled, passed."""

import json

import pytest
from set_copies import assert_named as _assert_named, records_after_edit, REPO

from sacscale.evidence.probe_code_settings import code_settings_problems

SET = "h200x1_shared_short"  # plan.json probe: devices "0,0", iterations 5, compile_loss true


def _verify_after(tmp_path, edit, name=SET):
    return records_after_edit(tmp_path, "correctness.json", edit, name)


def test_every_committed_probe_record_states_the_codes_settings():
    records = sorted((REPO / "results").glob("*/correctness.json"))
    assert len(records) >= 10
    for path in records:
        assert code_settings_problems(json.loads(path.read_text())) == [], path


def _loose_tolerances(record):
    record.update(tolerance={"grad_rel": 1.0, "param_rel": 1.0}, sync_tolerance=1.0)
    for c in record["comparisons"]:
        c["tolerance"] = 1.0
    actor = record["comparisons"][0]
    assert actor["tensor"] == "param/actor"
    actor.update(rel_diff=0.5, norm_rel_diff=0.5, max_rel_diff=0.5, max_abs_diff=0.5 * actor["scale"])


def test_tolerances_other_than_the_codes_table_are_named_and_not_judged_by(tmp_path):
    _assert_named(
        _verify_after(tmp_path, _loose_tolerances),
        "correctness.json: sync_tolerance 1.0, the code's float32 table gives 1e-05",
        "correctness.json: tolerance {'grad_rel': 1.0, 'param_rel': 1.0}, the code's float32 table gives "
        "{'grad_rel': 0.0001, 'param_rel': 0.001}",
        "correctness.json: comparison 1 (param/actor): tolerance 1.0, the code's float32 table gives 0.001",
        "correctness.json: comparison 8 (sync/critic): tolerance 1.0, the code's float32 table gives 1e-05",
        "correctness.json: comparison 1 (param/actor): pass True, but 0.5 against a tolerance of 0.001 fails",
    )


def test_a_trainer_paths_sync_tolerance_other_than_the_codes_is_named(tmp_path):
    def edit(record):
        record["trainer_path"]["sync_tolerance"] = 1.0
        record["trainer_path"]["comparisons"][0]["tolerance"] = 1.0
    _assert_named(
        _verify_after(tmp_path, edit),
        "correctness.json: trainer_path: sync_tolerance 1.0, the code's table gives 1e-05",
        "correctness.json: trainer_path: comparison 1 (sync/critic): tolerance 1.0, the code's table gives 1e-05",
    )


def test_a_tolerance_reason_other_than_the_codes_is_named(tmp_path):
    _assert_named(_verify_after(tmp_path, lambda r: r.update(tolerance_reason="relative errors within 1.0")),
                  "correctness.json: tolerance_reason 'relative errors within 1.0': not the code's")


def test_a_passing_probe_without_gradient_sync_is_named(tmp_path):
    _assert_named(
        _verify_after(tmp_path, lambda r: r.update(grad_sync=False)),
        "correctness.json: grad_sync False (the ranks ran without gradient sync), but pass True: over 2 ranks the "
        "probe fails without it",
        "correctness.json: grad_sync False, but the probe command the pipeline runs gives True",
    )


@pytest.mark.parametrize("mutation", ["no_allreduce", "sum"])
def test_a_passing_probe_of_a_sync_broken_on_purpose_is_named(tmp_path, mutation):
    _assert_named(
        _verify_after(tmp_path, lambda r: r.update(mutation=mutation)),
        f"correctness.json: mutation {mutation!r} (a sync broken on purpose), but pass True: over 2 ranks the "
        "probe fails it",
        f"correctness.json: mutation {mutation!r}, but the probe command the pipeline runs gives None",
    )


def test_a_mutation_the_probe_command_does_not_offer_is_named(tmp_path):
    _assert_named(
        _verify_after(tmp_path, lambda r: r.update(mutation="skip_allreduce")),
        "correctness.json: mutation 'skip_allreduce': not one of sacscale probe --mutation's choices (sum, "
        "no_allreduce, no_broadcast, scale_rank1)",
    )
    _assert_named(
        _verify_after(tmp_path / "t", lambda r: r["trainer_path"].update(mutation="no_broadcast")),
        "correctness.json: trainer_path: mutation 'no_broadcast' (a sync broken on purpose), but pass True",
        "correctness.json: trainer_path.mutation 'no_broadcast', but the probe command the pipeline runs gives None",
    )


def test_a_reference_batch_other_than_the_ranks_batches_together_is_named(tmp_path):
    _assert_named(_verify_after(tmp_path, lambda r: r.update(reference_batch=8192)),
                  "correctness.json: reference_batch 8192, but world_size 2 x batch_per_rank 8192 gives 16384")
    _assert_named(_verify_after(tmp_path / "t", lambda r: r.update(reference_batch=8192, batch_per_rank=4096)),
                  "correctness.json: batch_per_rank 4096, but plan.json's probe (devices '0,0') gives 8192")


def test_bfloat16_with_float32_judgments_is_named(tmp_path):
    _assert_named(
        _verify_after(tmp_path, lambda r: r.update(autocast_dtype="bfloat16")),
        "correctness.json: autocast_dtype 'bfloat16', but the probe command the pipeline runs gives 'float32'",
        "correctness.json: tolerance {'grad_rel': 0.0001, 'param_rel': 0.001}, the code's bfloat16 table gives "
        "{'grad_rel': 0.05, 'param_rel': None}",
        "correctness.json: comparison 1 (param/actor): judged True with a tolerance of 0.001, the code's bfloat16 "
        "table gives None (not judged)",
        "correctness.json: comparison 5 (grad/critic): tolerance 0.0001, the code's bfloat16 table gives 0.05",
    )


def test_a_dtype_the_probe_does_not_run_is_named(tmp_path):
    _assert_named(_verify_after(tmp_path, lambda r: r.update(autocast_dtype="float16")),
                  "correctness.json: autocast_dtype 'float16': not one the probe runs (float32, bfloat16)")


def test_compiled_losses_on_ranks_sharing_a_gpu_are_named(tmp_path):
    # the plan asks for compiled losses; on ranks sharing a GPU the probe runs them eagerly
    _assert_named(_verify_after(tmp_path, lambda r: r.update(compile_loss=True)),
                  "correctness.json: compile_loss True, but plan.json's probe (devices '0,0', compile_loss True; "
                  "compiled only on CUDA with one device per rank) gives False")
    _assert_named(_verify_after(tmp_path / "t", lambda r: r.update(allreduce_in_cuda_graph=True)),
                  "correctness.json: allreduce_in_cuda_graph True, but plan.json's probe")


def test_eager_losses_where_the_plan_compiles_them_are_named(tmp_path):
    _assert_named(_verify_after(tmp_path, lambda r: r.update(compile_loss=False), name="h200x1_final"),
                  "correctness.json: compile_loss False, but plan.json's probe (devices '0', compile_loss True; "
                  "compiled only on CUDA with one device per rank) gives True")


def test_the_mutations_verify_knows_are_the_probe_commands_choices():
    import argparse

    from sacscale.commands.probe import add_arguments
    from sacscale.parallel.probe_settings import MUTATIONS

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    mutation = next(a for a in parser._actions if a.dest == "mutation")
    assert tuple(mutation.choices) == MUTATIONS
