"""verify holds the correctness probe's measurements to the code: its comparisons are the
code's list for its mode, each once; its numbers agree where a formula relates them; its
spreads name the learner's state and differ only where a seed decides; its
initial_weights_identical is what the rest gives; seconds is a duration within its job's
limit; the trainer path's settings without a command option are the code's. A record
rewritten with its manifest to say otherwise passed."""

import json
import subprocess
import sys

from set_copies import assert_named as _assert_named, records_after_edit, REPO


SET = "h200x1_shared_short"  # 2 ranks on one GPU; plan.json probe timeout_s 1800


def _verify_after(tmp_path, edit):
    return records_after_edit(tmp_path, "correctness.json", edit, SET)


def _comparison(record, name, path="comparisons"):
    return next(c for c in record[path] if c["tensor"] == name)


def test_every_committed_probe_record_measures_what_the_code_does():
    from sacscale.evidence.probe_measures import measure_problems

    records = sorted((REPO / "results").glob("*/correctness.json"))
    assert len(records) >= 10
    for path in records:
        assert measure_problems(json.loads(path.read_text())) == [], path


def test_comparisons_other_than_the_codes_list_are_named(tmp_path):
    def edit(record):
        _comparison(record, "param/critic")["tensor"] = "param/actor"
        _comparison(record, "grad/alpha")["tensor"] = "grad/entropy"
        record["trainer_path"]["comparisons"].pop()
    _assert_named(
        _verify_after(tmp_path, edit),
        "correctness.json: comparisons: param/actor 2 times (the probe compares each once)",
        "correctness.json: comparisons: grad/entropy: not among the tensors the probe compares "
        "(sacscale.parallel.probe_tensors.compared_tensors)",
        "correctness.json: comparisons: no param/critic, grad/alpha (the probe compares 10: "
        "sacscale.parallel.probe_tensors.compared_tensors)",
        "correctness.json: trainer_path: comparisons: no sync/actor (the probe compares 3: ",
    )


def test_numbers_a_formula_relates_are_named_where_they_disagree(tmp_path):
    def edit(record):
        _comparison(record, "param/log_alpha").update(norm_rel_diff=1e-6, rel_diff=1e-6)
        alpha = _comparison(record, "grad/alpha")
        alpha["norm_rel_diff"] = 2 * alpha["max_rel_diff"]
        critic = _comparison(record, "grad/critic")
        critic["scale"] *= 2
        critic["max_rel_diff"] = critic["rel_diff"] = critic["max_abs_diff"] / critic["scale"]
    _assert_named(
        _verify_after(tmp_path, edit),
        "correctness.json: comparison 4 (param/log_alpha): max_abs_diff 0.0, norm_rel_diff 1e-06: a difference is "
        "zero exactly where its 2-norm is",
        "correctness.json: comparison 6 (grad/alpha): norm_rel_diff ",
        "correctness.json: comparisons 5 (grad/critic) and 8 (sync/critic): scales ",
    )
    assert any("alpha is one number, whose 2-norm is its largest entry" in p for p in _verify_after(
        tmp_path / "again", lambda r: _comparison(r, "grad/alpha").update(norm_rel_diff=1e-3)))


def test_spreads_flags_mode_and_seconds_the_code_does_not_give_are_named(tmp_path):
    def edit(record):
        before = record["rank_spread_before_broadcast_max_abs"]
        before.update(log_alpha=0.01, target_critic=0.5)
        record["rank_spread_max_abs"]["obs_mean"] = 0.0
        record.update(initial_weights_identical=False, mode="trainer", seconds=-1, **{"pass": False})
    _assert_named(
        _verify_after(tmp_path, edit),
        "correctness.json: rank_spread_before_broadcast_max_abs.log_alpha 0.01: every rank starts it from the same "
        "value (a rank's seed draws only the networks' weights)",
        "correctness.json: rank_spread_before_broadcast_max_abs.target_critic 0.5 is not critic's ",
        "correctness.json: rank_spread_max_abs: names actor, critic, log_alpha, obs_mean, target_critic, the "
        "learner's state tensors are actor, critic, target_critic, log_alpha",
        "correctness.json: initial_weights_identical False, but the ranks ended identical and every judged "
        "parameter matched the reference's",
        "correctness.json: mode 'trainer', but the probe command the pipeline runs gives 'learner'",
        "correctness.json: seconds -1: not a duration (a finite number of seconds above zero)",
    )


def test_weights_a_broken_broadcast_left_apart_and_a_probe_longer_than_its_job_are_named(tmp_path):
    _assert_named(
        _verify_after(tmp_path, lambda r: r.update(mutation="no_broadcast", seconds=4000.0, **{"pass": False})),
        "correctness.json: initial_weights_identical True, but over 2 ranks that started apart the start-up "
        "broadcast was broken on purpose (mutation 'no_broadcast'): their weights still differ",
        "correctness.json: seconds 4000.0, but plan.json's probe timeout_s 1800 ends the probe's job before",
    )


def test_trainer_path_settings_without_a_command_option_are_the_codes(tmp_path):
    def edit(record):
        record["trainer_path"].update(num_envs=32, batch_per_rank=256, mode="learner", criterion="anything goes")
    settings = "(sacscale.train.probe_settings.TrainerProbeSettings; sacscale probe has no option for it)"
    _assert_named(
        _verify_after(tmp_path, edit),
        f"correctness.json: trainer_path: num_envs 32, but the trainer probe's settings give 16 {settings}",
        f"correctness.json: trainer_path: batch_per_rank 256, but the trainer probe's settings give 128 {settings}",
        f"correctness.json: trainer_path: mode 'learner', but the trainer probe's settings give 'trainer' {settings}",
        "correctness.json: trainer_path: criterion 'anything goes': not the code's "
        "(sacscale.train.probe_settings.CRITERION)",
    )


def test_verify_reads_the_probes_names_and_settings_without_torch():
    code = ("import sys, sacscale.evidence.probe_measures, sacscale.train.probe_settings; "
            "print('torch' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "False", done.stderr
