"""Bad input to the commands, through the CLI as a user runs it: one line
naming the option, file or key, exit 2, nothing written."""

import json

import pytest

from cli_runs import edited_metrics, one_line, sacscale


def test_a_usage_error_is_one_line_and_help_still_shows_the_usage(tmp_path):
    """argparse printed its usage lines above the error line."""
    done = sacscale("compare-learning", f"a={tmp_path}", "--at-env-steps", "nan")
    one_line(done, "sacscale compare-learning: error: argument --at-env-steps: 'nan'")
    one_line(sacscale("analyze-run", tmp_path), "the following arguments are required: --output")
    one_line(sacscale("nonsense"), "sacscale: error: argument COMMAND: invalid choice")
    shown = sacscale("compare-learning", "--help")
    assert shown.returncode == 0 and shown.stdout.startswith("usage: sacscale compare-learning"), shown


def test_verify_env_names_a_missing_plan_key_in_words_and_writes_nothing(tmp_path):
    plan = tmp_path / "plan.json"
    plan.write_text("{}")
    out, diff = tmp_path / "env.json", tmp_path / "d.patch"
    done = sacscale("verify-env", "--output", out, "--plan", plan, "--diff-output", diff)
    one_line(done, f"plan {plan}: not a resolved run plan (plan.json): its 'preset' is missing")
    assert "KeyError" not in done.stderr and not out.exists() and not diff.exists()


@pytest.mark.parametrize("plan, says", [
    ({"preset": "x", "probe": {"devices": "cpu"}, "run_configs": {}}, "its 'preset_reason' is missing"),
    ({"preset": "x", "preset_reason": "r", "run_configs": {}}, "its 'probe' is missing"),
    ({"preset": "x", "preset_reason": "r", "probe": {"devices": 0}, "run_configs": {}}, "its 'probe.devices' is int"),
    ({"preset": "x", "preset_reason": "r", "probe": {"devices": "cpu"}, "run_configs": []},
     "its 'run_configs' is list, not an object"),
    ({"preset": "x", "preset_reason": "r", "probe": {"devices": "cpu"}, "run_configs": {"a": {"devices": "0,,1"}}},
     "its 'run_configs.a.devices' is '0,,1', neither 'cpu' ranks nor CUDA device indices"),
    ({"preset": "x", "preset_reason": "r", "probe": {"devices": "cpu"},
      "run_configs": {"a": {"devices": "cpu", "cpu_pools": 7}}}, "cpu_pools\" is int"),
])
def test_verify_env_plans_of_another_shape_are_named_before_anything_is_written(tmp_path, plan, says):
    """A plan without preset_reason ended in `KeyError` (exit 1) after environment.json was
    written; others named Python's exception (`AttributeError: 'int' object has no ...`)."""
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    done = sacscale("verify-env", "--output", tmp_path / "env.json", "--plan", path)
    one_line(done, says)
    assert "Error" not in done.stderr and not (tmp_path / "env.json").exists()


@pytest.mark.parametrize("extra, says", [
    (["--pair", "n1_pool7:n1_pool7"],
     "error: --pair 'n1_pool7:n1_pool7': 'n1_pool7' compared with itself; a pair names two configurations"),
    (["--pair", "n1_pool7:n2", "--pair", "n1_pool7 : n2"], "error: --pair 'n1_pool7 : n2': n1_pool7:n2 is given twice"),
    (["--order", "n1_pool7,n1_pool7,n2"], "error: --order: 'n1_pool7' is listed twice"),
])
def test_aggregate_refuses_a_comparison_with_itself_or_twice_and_an_order_with_a_name_twice(tmp_path, extra, says):
    """A configuration compared with itself gave a ratio of 1.000x; a pair or an order entry
    given twice showed the comparison or the row twice (the plan refuses all three)."""
    done = sacscale("aggregate", *_two_configs(tmp_path), "--csv", tmp_path / "s.csv", "--json", tmp_path / "s.json",
                    *extra)
    one_line(done, says)
    assert not (tmp_path / "s.csv").exists() and not (tmp_path / "s.json").exists()


def _two_configs(tmp_path):
    """Metrics files of n1_pool7 and n2."""
    m = edited_metrics(tmp_path, lambda r: r)
    other = tmp_path / "o.json"
    other.write_text(json.dumps({**json.loads(m.read_text()), "run": "x", "config": "n2"}))
    return m, other


def test_aggregate_takes_a_pair_spaced_as_the_order_may_be(tmp_path):
    """`--order "a, b"` was read, `--pair " a: b"` refused as naming configurations ' a' and ' b'."""
    done = sacscale("aggregate", *_two_configs(tmp_path), "--csv", tmp_path / "s.csv", "--json", tmp_path / "s.json",
                    "--order", "n1_pool7, n2", "--pair", " n1_pool7: n2")
    assert done.returncode == 0, done.stderr
    comparisons = json.loads((tmp_path / "s.json").read_text())["comparisons"]
    assert [(c["baseline"], c["compared"]) for c in comparisons] == [("n1_pool7", "n2")]


@pytest.mark.parametrize("pair, says", [
    ("nope:n2", "--pair 'nope:n2': 'nope' is no configuration of the metrics given (theirs: n1_pool7, n2)"),
    (" n1_pool7: n3", "--pair ' n1_pool7: n3': 'n3' is no configuration of the metrics given (theirs: n1_pool7, n2)"),
    (" : n2", "--pair ' : n2': expected BASE:COMPARED"),
])
def test_aggregate_names_the_pair_option_in_its_refusals(tmp_path, pair, says):
    """It said `pairs: no runs of configuration(s) [...]`, the key of the pipeline's config."""
    done = sacscale("aggregate", *_two_configs(tmp_path), "--csv", tmp_path / "s.csv", "--json", tmp_path / "s.json",
                    "--pair", pair)
    one_line(done, f"sacscale aggregate: error: {says}")
    assert not (tmp_path / "s.csv").exists() and not (tmp_path / "s.json").exists()


@pytest.mark.parametrize("resolved, says", [
    ('{"run": "a", "x": NaN}', "--resolved-json: holds NaN"),
    ('{"run": "a", "run": "b"}', "--resolved-json: the key 'run' is given twice"),
    ('{"run": "a\\udcff"}', "--resolved-json: a string with a lone surrogate"),
])
def test_record_run_reads_its_resolved_configuration_as_records_are_read(tmp_path, resolved, says):
    """NaN went into run.json as null, a key given twice kept its last value, and a lone
    surrogate made a completed run whose record verify refuses."""
    done = sacscale("record-run", "--run-dir", tmp_path / "r", "--work-dir", tmp_path / "w", "--attic", tmp_path / "a",
                    "--timeout", "60", "--resolved-json", resolved, "--", "true")
    one_line(done, says)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("option, value", [("--progress-every", "-5"), ("--progress-every-s", "nan"),
                                           ("--progress-every-s", "0")])
def test_record_run_refuses_progress_settings_that_mean_nothing(tmp_path, option, value):
    done = sacscale("record-run", "--run-dir", tmp_path / "r", "--work-dir", tmp_path / "w", "--attic", tmp_path / "a",
                    "--timeout", "60", option, value, "--", "true")
    one_line(done, f"{option} {float(value) if option.endswith('-s') else value}:")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv, says", [
    (["--extra", '{"gamma": NaN}'], "--extra gamma must be a finite number, got nan"),
    (["--extra", '{"gamma": "x"}'], "--extra gamma must be a finite number, got 'x'"),
    (["--extra", '{"gamma": 0.9, "gamma": 0.5}'], "argument --extra: not valid JSON (the key 'gamma' is given twice"),
    (["--modes", "eager", "eager"], "--modes: 'eager' is given twice"),
    (["--device", "nonsense"], "--device 'nonsense': not a torch device"),
    (["--device", "cuda:7"], "--device 'cuda:7': no such CUDA device here"),
    (["--device", "meta"], "--device 'meta': the learner runs on cpu or cuda"),
])
def test_learner_bench_refuses_settings_the_trainer_refuses_and_devices_it_cannot_use(tmp_path, argv, says):
    """NaN or a string gamma was benchmarked as given; a device torch cannot name or use
    ended in a RuntimeError or AssertionError, exit 1 as unexpected."""
    base = ["--iters", "1", "--warmup", "0", "--batch", "8", "--num-envs", "8", "--out", tmp_path / "o.json"]
    done = sacscale("learner-bench", *base, *(["--device", "cpu"] if "--device" not in argv else []),
                    *(["--modes", "eager"] if "--modes" not in argv else []), *argv)
    one_line(done, says)
    assert not (tmp_path / "o.json").exists()


@pytest.mark.parametrize("argv, says", [
    (["--expect-sha256", "XYZ"], "argument --expect-sha256: 'XYZ' is not a SHA-256 (64 hex digits)"),
    (["--steps", "-1"], "argument --steps: '-1': must be 1..1000000"),
    (["--threads", "0"], "argument --threads: '0': must be 1..8192"),
    (["--num-envs", "99999999999"], "argument --num-envs: '99999999999': must be 1..1048576"),
])
def test_prepare_model_refuses_a_pin_that_is_no_hash_and_counts_that_measure_nothing(tmp_path, argv, says):
    """A pin that is no SHA-256 was found only as a mismatch once the model was built and
    saved (exit 1, the model left); a step or thread count of 0 or below ended in a
    ZeroDivisionError after the model was written."""
    one_line(sacscale("prepare-model", "--output-dir", tmp_path / "m", *argv), says)
    assert not (tmp_path / "m").exists()


def test_render_refuses_a_commanded_velocity_past_any_walking_speed(tmp_path):
    """1e308 m/s passed the finite check, became inf in the task's float32 inputs and ended
    in `actions contain NaN or inf` below a numpy overflow warning, naming no option."""
    done = sacscale("render", tmp_path / "no-run", "--output", tmp_path / "v.gif", "--commands", "1e308,0,0:1")
    one_line(done, "--commands segment 1 '1e308,0,0:1': a velocity beyond 100 (m/s, rad/s)")
    assert not (tmp_path / "v.gif").exists()


def test_reference_env_names_a_folder_given_as_its_interpreter(tmp_path):
    """Running a folder failed with `permission denied`, which named no cause."""
    one_line(sacscale("reference-env", "--output", tmp_path / "r.json", "--python", tmp_path),
             f"--python {tmp_path}: not a plain file (a folder, a device?)")
    assert not (tmp_path / "r.json").exists()


def test_prepare_model_takes_a_pin_in_upper_case(tmp_path):
    """The pin is hex: one in upper case was refused as another model once it was built."""
    pin = "6429381f6ce1bfac8dd7bb5ba88b196fa7e70029ab75b6678a8d506441e45560".upper()
    done = sacscale("prepare-model", "--output-dir", tmp_path / "m", "--expect-sha256", pin, "--steps", "1",
                    "--num-envs", "2")
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "m" / "g1_walk_flat.mjb").is_file()


def test_manifest_refuses_one_file_for_the_manifest_and_its_record(tmp_path):
    """`--output X --json X`: the record replaced the manifest, exit 0."""
    (tmp_path / "set").mkdir()
    (tmp_path / "set" / "a.txt").write_text("a\n")
    out = tmp_path / "m.sha256"
    one_line(sacscale("manifest", tmp_path / "set", "--output", out, "--json", out),
             f"--output and --json are one file ({out}): the second would replace the first")
    assert not out.exists()


def test_train_refuses_more_iterations_than_the_plan_allows(tmp_path):
    """`train --iterations 10**20` by hand trained on without end (the plan bounds it at 10**9)."""
    done = sacscale("train", "--devices", "cpu", "--iterations", str(10**20), "--log-dir", tmp_path / "run")
    one_line(done, "sacscale train: error: --iterations must be at most 1,000,000,000, got 1e+20")
    assert not (tmp_path / "run").exists()
