"""Command-line input. A metrics file whose fields were of
another type (a repeat as a string, a world size of 1.5, ranks as an object) went into
summary.json as written, and one with no steady rate wrote both outputs and then ended in
a TypeError (exit 1) while printing the summary."""

import json
import shutil

import pytest

from cli_runs import REPO, SET, sacscale
from cli_runs import edited_metrics as _metrics
from cli_runs import one_line as _one_line


@pytest.mark.parametrize("edit, says", [
    (lambda r: {**r, "repeat": "1"}, "'repeat' is str"),
    (lambda r: {**r, "repeat": 10**40}, "'repeat' is a number of 41 digits, not a repeat of a plan (from 1 to 1,000)"),
    (lambda r: {**r, "repeat": 1001}, "'repeat' is 1001, not a repeat of a plan (from 1 to 1,000)"),
    (lambda r: {**r, "repeat": 0}, "'repeat' is 0, not a repeat of a plan (from 1 to 1,000)"),
    (lambda r: {**r, "world_size": 1.5}, "'world_size' is float"),
    (lambda r: {**r, "ranks": {}}, "'ranks' is dict, not a list"),
    (lambda r: {**r, "ranks": [{**r["ranks"][0], "phase_ms": {"learner_update_ms": "x"}}]},
     '"ranks[0].phase_ms[\'learner_update_ms\']" is str'),
    (lambda r: {**r, "window": [1]}, "'window' is list, not an object"),
    (lambda r: {**r, "final_episode_return": "x"}, "'final_episode_return' is str"),
    (lambda r: {**r, "devices": 0}, "'devices' is int"),
])
def test_a_metrics_field_of_another_type_is_named_and_nothing_is_written(tmp_path, edit, says):
    metrics = _metrics(tmp_path, edit)
    done = sacscale("aggregate", metrics, "--csv", tmp_path / "s.csv", "--json", tmp_path / "s.json")
    _one_line(done, f"metrics file {metrics}: not analyze-run's output (its {says})")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.json"]


def test_a_configuration_without_a_rate_is_summarised_not_a_type_error(tmp_path):
    metrics = _metrics(tmp_path, lambda r: {**r, "steady_env_steps_per_s": None})
    done = sacscale("aggregate", metrics, "--csv", tmp_path / "s.csv", "--json", tmp_path / "s.json")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "n1_pool7: no steady rate recorded (n=0)" in done.stdout
    assert json.loads((tmp_path / "s.json").read_text())["configs"]["n1_pool7"]["mean"] is None


def _report_on_edited_copy(tmp_path, rel, edit):
    root = tmp_path / "results" / SET
    shutil.copytree(REPO / "results" / SET, root)
    record = root / rel
    record.write_text(json.dumps(edit(json.loads(record.read_text()))))
    return sacscale("report", "--run-set", f"results/{SET}", cwd=tmp_path)


@pytest.mark.parametrize("rel, edit, says", [
    ("metrics/shared_r1_n1_pool7.json", lambda r: {**r, "window": [1]}, "'window' is list, not an object"),
    ("metrics/shared_r1_n1_pool7.json", lambda r: {**r, "series": [1]}, "'series' is list, not an object"),
    ("metrics/shared_r1_n1_pool7.json", lambda r: {**r, "repeat": 10**40},
     "'repeat' is a number of 41 digits, not a repeat of a plan (from 1 to 1,000)"),
    ("metrics/shared_r1_n1_pool7.json", lambda r: {**r, "steady_env_steps_per_s": "1"},
     "'steady_env_steps_per_s' is str"),
    ("eval/shared_r1_n1_pool7.json", lambda r: {**r, "overall": {k: v for k, v in r["overall"].items()
                                                                if k != "fall_rate"}},
     "'overall.fall_rate' is missing"),
    ("eval/shared_r1_n1_pool7.json", lambda r: {**r, "overall": {k: "x" for k in r["overall"]}},
     "'overall.normalised_tracking' is str, not an object"),
    ("eval/shared_r1_n1_pool7.json", lambda r: {**r, "per_command": [1]}, "'per_command' is list, not an object"),
    ("summary.json", lambda r: {**r, "meta": [1]}, "'meta' is list"),
    ("summary.json", lambda r: {**r, "configs": {k: {**v, "runs": "x"} for k, v in r["configs"].items()}},
     "\"configs['n1_pool7'].runs\" is str, not a list"),
    ("environment.json", lambda r: {k: "x" for k in r}, "is str"),
    ("environment.json", lambda r: {**r, "plan": [1, 2]}, "'plan' is list"),
    ("correctness.json", lambda r: {**r, "pass": "no"}, "'pass' is str"),
])
def test_a_record_field_of_another_type_is_named_and_no_page_is_written(tmp_path, rel, edit, says):
    done = _report_on_edited_copy(tmp_path, rel, edit)
    _one_line(done, f"sacscale report: error: results/{SET}/{rel}: not a record this pipeline wrote (its ")
    assert says in done.stderr, done.stderr
    assert not (tmp_path / "reports" / SET / "report.md").exists()


@pytest.mark.parametrize("rel, edit, says", [
    ("train_meta.json", lambda r: [r], "(a JSON list, not an object)"),
    ("train_meta.json", lambda r: {**r, "start_time": "x"}, "(its 'start_time' is str)"),
    ("run.json", lambda r: {**r, "resolved_config": "x"}, "(its 'resolved_config' is str, not an object)"),
    ("run.json", lambda r: {**r, "exit_status": "0"}, "(its 'exit_status' is str)"),
])
def test_a_run_record_of_another_shape_is_named_by_analyze_run(tmp_path, rel, edit, says):
    run = tmp_path / "shared_r1_n1_pool7"
    shutil.copytree(REPO / "results" / SET / "runs" / run.name, run, ignore=shutil.ignore_patterns("checkpoints"))
    (run / rel).write_text(json.dumps(edit(json.loads((run / rel).read_text()))))
    done = sacscale("analyze-run", run, "--output", tmp_path / "o.json")
    # a run it cannot analyse is exit 1 (sacscale.commands.analyze_run), one line naming the file
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.strip() == (f"sacscale analyze-run: error: {run / rel}: not a record the trainer or the run "
                                   f"wrapper wrote {says}")
    assert not (tmp_path / "o.json").exists()


def test_an_evaluation_with_a_fall_rate_as_a_string_is_named_by_render_best(tmp_path):
    record = json.loads((REPO / "results" / SET / "eval" / "shared_r1_n1_pool7.json").read_text())
    evaluation = tmp_path / "shared_r1_n1_pool7.json"
    evaluation.write_text(json.dumps({**record, "overall": {**record["overall"], "fall_rate": "0.5"}}))
    done = sacscale("render-best", "--evaluations", evaluation, "--runs-dir", REPO / "results" / SET / "runs",
                    "--record", tmp_path / "out" / "r.json", "--output", tmp_path / "out" / "v.webp")
    _one_line(done, f"evaluation {evaluation}: not `sacscale evaluate`'s output (its 'overall.fall_rate' is str)")
    assert sorted(p.name for p in tmp_path.iterdir()) == [evaluation.name]


def test_keep_best_without_scope_is_a_usage_error(tmp_path):
    done = sacscale("manifest", tmp_path, "--keep-best", tmp_path / "e.json")
    _one_line(done, "--keep-policies, --keep-best and --left-out-dir need --scope")
    assert list(tmp_path.iterdir()) == []
